#!/usr/bin/env bash
# Regenerates tests/fixtures/pii/nss_regex_detections.json: NVIDIA NeMo Safe
# Synthesizer's own 36 regex PII detectors on the labelled table's cells,
# for tests/pii/nss_regex_parity_test.py (scripts/pii_reference.py says how).
#
# Uses the reference venv of scripts/make_evaluation_fixtures.sh
# (NSS_EVAL_VENV, default build-eval/eval-venv; run that script first). NSS's
# regex detectors import tldextract, python-stdnum and regex, which that venv
# does not hold; they go, pinned and with --no-deps, into their own folder
# (NSS_PII_DEPS, default build-eval/pii-deps) put on PYTHONPATH, so the
# evaluation venv stays exactly what its script pins. pii_labelled_table_dump
# comes from BUILD_DIR (default build). Never run by scripts/setup.sh or the
# test command; its output is committed.
#   BUILD_DIR=build scripts/make_pii_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${NSS_EVAL_VENV:-build-eval/eval-venv}
deps=${NSS_PII_DEPS:-build-eval/pii-deps}
build=${BUILD_DIR:-build}
out=tests/fixtures/pii/nss_regex_detections.json
# 100 rows: 3,900 cells (300 of free text), about 100 labelled values of each
# entity NSS's regexes share with ours, and a fixture of about 370 KB.
rows=100

# What NSS's regex detectors import beyond the evaluation venv, pinned, with
# tldextract's own imports (it runs offline, on its bundled suffix list).
requirements='tldextract==5.1.3
python-stdnum==1.20
regex==2024.11.6
requests==2.32.3
requests-file==2.1.0
filelock==3.16.1
idna==3.10
urllib3==2.2.3
certifi==2024.8.30
charset-normalizer==3.4.0'

if [ ! -x "$venv/bin/python" ]; then
  echo "$venv: no reference venv; run scripts/make_evaluation_fixtures.sh first" >&2
  exit 1
fi
stamp="$deps/nss-pii-requirements.txt"
if [ "$(cat "$stamp" 2>/dev/null)" != "$requirements" ]; then
  rm -rf "$deps"
  mkdir -p "$deps"
  printf '%s\n' "$requirements" > "$deps/requirements.in"
  "$venv/bin/pip" install -q --disable-pip-version-check --no-cache-dir --no-deps \
    --only-binary=:all: --target "$deps" -r "$deps/requirements.in"
  printf '%s' "$requirements" > "$stamp"
fi

cells=$(mktemp)
trap 'rm -f "$cells"' EXIT
"$build/bin/pii_labelled_table_dump" dump "$rows" > "$cells"
mkdir -p "$(dirname "$out")"
PYTHONPATH="$deps" "$venv/bin/python" scripts/pii_reference.py --cells "$cells" --out "$out"
