#!/usr/bin/env bash
# Builds the default dataset that configs/run.yaml trains on, from text every
# Debian 12 machine with nss_hpc's packages has, so nothing is downloaded and
# the result is the same on every such machine:
#   - the license texts in /usr/share/common-licenses (base-files), and
#   - the top-level modules of Debian's Python standard library
#     (/usr/lib/python3.X/*.py, from python3, which setup.sh installs);
# about 5 MB of text, byte-level tokens. Files are taken in byte-wise sorted
# order; every 10th goes to the validation set.
#   scripts/prepare_default_data.sh [OUT_DIR]    # default: data/default
# Writes OUT_DIR/train.h5 and OUT_DIR/val.h5 unless both exist already.
set -euo pipefail
NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_DIR=${1:-$NSS_ROOT/data/default}
PREPARE=${NSS_PREPARE_DATA:-${NSS_BIN_DIR:-${BUILD_DIR:-$NSS_ROOT/build}/bin}/nss_prepare_data}

if [ -f "$OUT_DIR/train.h5" ] && [ -f "$OUT_DIR/val.h5" ]; then
  echo "[data] $OUT_DIR/train.h5 and val.h5 exist"
  exit 0
fi
[ -x "$PREPARE" ] || { echo "[data] error: $PREPARE not found: build first (scripts/setup.sh)" >&2; exit 1; }

STDLIB=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
mapfile -t FILES < <(
  { find /usr/share/common-licenses -maxdepth 1 -type f; find "$STDLIB" -maxdepth 1 -type f -name '*.py'; } \
    | LC_ALL=C sort)
[ "${#FILES[@]}" -gt 20 ] || { echo "[data] error: only ${#FILES[@]} corpus files found" >&2; exit 4; }

TRAIN=() VAL=()
for i in "${!FILES[@]}"; do
  if [ $((i % 10)) -eq 9 ]; then VAL+=(--input "${FILES[$i]}"); else TRAIN+=(--input "${FILES[$i]}"); fi
done
mkdir -p "$OUT_DIR"
"$PREPARE" --format text "${TRAIN[@]}" --output "$OUT_DIR/train.h5"
"$PREPARE" --format text "${VAL[@]}" --output "$OUT_DIR/val.h5"
