#!/usr/bin/env bash
# Regenerates tests/fixtures/evaluation: golden scores from NVIDIA NeMo Safe
# Synthesizer's own evaluator (SQS and DPS with every sub-score) on the
# scikit-learn tables and the generated mixed and free-text tables, for
# nss_evaluate's tests (scripts/evaluation_reference.py and
# tests/fixtures/evaluation/README.md say what is in them).
#
# nemo-safe-synthesizer 0.1.16 needs huggingface-hub >= 1.3 while the test
# venv's transformers needs < 1.0, so this builds its own venv
# (NSS_EVAL_VENV, default build-eval/eval-venv) with /usr/bin/python3 and
# installs, with --no-deps, exactly the pinned list below: NSS itself plus what
# its evaluation modules import (found by importing them), and nothing else
# -- no torch, vllm, transformers, sentence-transformers or huggingface-hub
# (evaluation_reference.py stubs the two module-level heavy imports; its
# docstring says which and why). Installing is skipped when the venv already
# holds this exact list. Runs the reference with PYTHONHASHSEED=0. Never run by
# scripts/setup.sh or the test command; its output is committed.
#   scripts/make_evaluation_fixtures.sh            regenerate the fixtures
#   scripts/make_evaluation_fixtures.sh ARGS...    run evaluation_reference.py ARGS
#                                                  instead (e.g. --time 5000)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSS_EVAL_VENV:-build-eval/eval-venv}
out=${NSS_EVAL_FIXTURES:-tests/fixtures/evaluation}

# Every package in the venv, pinned (the closure of NSS's evaluation imports
# on CPython 3.11).
requirements='nemo-safe-synthesizer==0.1.16
annotated-types==0.8.0
category_encoders==2.11.2
cloudpickle==3.1.3
colorama==0.4.6
contourpy==1.3.3
cycler==0.12.1
dython==0.7.12
Faker==40.63.0
fonttools==4.68.0
joblib==1.6.0
kiwisolver==1.5.1
markdown-it-py==4.3.0
matplotlib==3.11.2
mdurl==0.1.2
narwhals==2.29.0
numpy==2.4.6
packaging==26.4
pandas==2.3.3
pillow==13.0.0
plotly==7.1.0
psutil==7.2.2
pydantic==2.14.4
pydantic-settings==2.16.3
pydantic_core==2.50.5
Pygments==2.21.0
pyparsing==3.3.3
python-dateutil==4.0.0
python-dotenv==1.2.4
pytz==2026.6
PyYAML==6.0.4
rich==15.0.0
scikit-learn==1.9.1
scipy==1.17.1
seaborn==0.13.2
structlog==26.1.0
tenacity==9.1.4
threadpoolctl==3.8.0
typing-inspection==0.4.5
typing_extensions==4.16.0
tzdata==2026.6'
pip_version=26.3

stamp="$venv/nss-eval-requirements.txt"
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ]; then
    echo "$venv exists and is not a venv; set NSS_EVAL_VENV elsewhere" >&2
    exit 1
  fi
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "pip==$pip_version"
  printf '%s\n' "$requirements" > "$venv/requirements.in"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir --no-deps \
    --only-binary=:all: -r "$venv/requirements.in"
  printf '%s' "$requirements" > "$stamp"
fi

export PYTHONHASHSEED=0
# scikit-learn breaks nearest-neighbour ties by its thread count; nss_evaluate as on one thread.
export OMP_NUM_THREADS=1
if [ $# -gt 0 ]; then
  exec "$venv/bin/python" scripts/evaluation_reference.py "$@"
fi
"$venv/bin/python" scripts/evaluation_reference.py --out "$out"
