#!/usr/bin/env bash
# Regenerates tests/fixtures/real_models (make_real_model_references.py): what
# transformers computes on the real Qwen2 and Gemma 3 models that
# scripts/real_models.py converts into build/models (run scripts/setup.sh
# first). Gemma 3 needs a transformers the test venv cannot hold, so this uses
# the torch venv of scripts/build_torch2.sh (NSS_TORCH_VENV, default
# build-torch2/torch-venv) with the same pinned transformers as
# scripts/make_family_fixtures.sh. Never run by scripts/setup.sh or the test
# command; its output is committed.
#   scripts/make_real_model_references.sh [MODEL...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSS_TORCH_VENV:-build-torch2/torch-venv}
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --no-cache-dir -q "torch==2.11.0"
fi
"$venv/bin/pip" install -q "transformers==5.24.0" "tokenizers==0.23.3" safetensors numpy
"$venv/bin/python" tests/fixtures/real_models/make_real_model_references.py build/models tests/fixtures/real_models "$@"
