#!/usr/bin/env bash
# Regenerates tests/fixtures/families (make_family_fixtures.py) with pinned
# torch 2 and transformers: the families the test venv's transformers 4.46
# (over Debian's torch 1.13) cannot build; without FAMILY arguments also
# tests/fixtures/real_models (make_real_model_references.py: transformers on
# the real Qwen2 and Gemma 3 models scripts/real_models.py converts into
# build/models, so scripts/setup.sh first). It uses the torch venv that
# scripts/build_torch2.sh makes (NSS_TORCH_VENV, default
# build-torch2/torch-venv; torch from PyPI, about 4.6 GB) and adds the pinned
# transformers to it. Never run by scripts/setup.sh or the test command; its
# output is committed.
#   scripts/make_family_fixtures.sh [FAMILY...]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSS_TORCH_VENV:-build-torch2/torch-venv}
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install --no-cache-dir -q "torch==2.11.0"
fi
"$venv/bin/pip" install -q "transformers==5.24.0" "tokenizers==0.23.3" safetensors numpy
"$venv/bin/python" tests/fixtures/families/make_family_fixtures.py tests/fixtures/families "$@"
if [ $# -eq 0 ]; then
  "$venv/bin/python" tests/fixtures/real_models/make_real_model_references.py build/models tests/fixtures/real_models
fi
