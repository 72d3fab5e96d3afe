#!/usr/bin/env bash
# The venv tests/quant/test_nf4_bitsandbytes.py compares lib/quant against:
# bitsandbytes from PyPI over PyTorch's PyPI wheel (CPU backend). Not part of
# scripts/setup.sh: PyPI's Linux torch wheel bundles CUDA, so the venv is about
# 4.5 GB (torch + nvidia-* wheels; bitsandbytes itself is 43 MB).
# Idempotent: an existing venv that imports bitsandbytes is kept.
#
#   scripts/setup_bnb_venv.sh            # -> build/bnb-venv
#   BNB_VENV=/path scripts/setup_bnb_venv.sh
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BNB_VENV=${BNB_VENV:-$ROOT/build/bnb-venv}
TORCH_PIN=${TORCH_PIN:-2.5.1}
BNB_PIN=${BNB_PIN:-0.50.2}

if [[ -x $BNB_VENV/bin/python ]] &&
  "$BNB_VENV/bin/python" -c "import bitsandbytes" >/dev/null 2>&1; then
  echo "[setup_bnb_venv] $BNB_VENV already has bitsandbytes"
  exit 0
fi
/usr/bin/python3 -m venv --clear "$BNB_VENV" ||
  { echo "[setup_bnb_venv] cannot create $BNB_VENV (install python3-venv)" >&2; exit 1; }
# --no-cache-dir: a second copy of the wheels in pip's cache would only take disk.
"$BNB_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
  "torch==$TORCH_PIN" "bitsandbytes==$BNB_PIN" numpy ||
  { echo "[setup_bnb_venv] pip could not install torch==$TORCH_PIN bitsandbytes==$BNB_PIN" >&2; exit 1; }
"$BNB_VENV/bin/python" -c "import bitsandbytes, torch; print('[setup_bnb_venv] torch', torch.__version__, 'bitsandbytes', bitsandbytes.__version__)"
