#!/usr/bin/env bash
# Offline consolidation for a login node: no mpirun, no GPU, no libtorch, and
# memory bounded by --max-memory whatever the model size.
#
#   scripts/consolidate_checkpoint.sh CHECKPOINT_DIR|STEP_DIR [--output PATH]
#       [--format hf|safetensors|hdf5] [--dtype float32|bfloat16|float16]
#       [--max-memory 256MiB] [--max-shard-size 5GB] [--merge-lora]
#
# CHECKPOINT_DIR (e.g. runs/NAME/checkpoints) means its newest committed step.
# The default is --format hf into <STEP_DIR>_hf. Every checksum is verified
# while reading; the output appears only when complete. Exit codes: 0 done,
# 2 usage, 5 damaged checkpoint (run `nss_ckpt verify` for the full list).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${NSS_BIN_DIR:-$root/build/bin}"
if [ ! -x "$bin/nss_consolidate" ]; then
  echo "consolidate_checkpoint.sh: $bin/nss_consolidate not found; build first (scripts/setup.sh) or set NSS_BIN_DIR" >&2
  exit 2
fi
if [ $# -lt 1 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -lt 1 ] && exit 2 || exit 0
fi

source_dir="${1%/}"
shift
if [ -f "$source_dir/metadata.json" ]; then
  step_dir="$source_dir"
elif [ -f "$source_dir/latest" ] || compgen -G "$source_dir/step_*" >/dev/null; then
  # The newest committed step: a step_N directory holding metadata.json.
  step_dir="$(find "$source_dir" -mindepth 2 -maxdepth 2 -name metadata.json -path '*/step_*/metadata.json' \
              | grep -E '/step_[0-9]+/metadata.json$' | sort | tail -n 1 | xargs -r dirname)"
  if [ -z "$step_dir" ]; then
    echo "consolidate_checkpoint.sh: $source_dir holds no committed step" >&2
    exit 2
  fi
  echo "consolidate_checkpoint.sh: newest committed step is $step_dir" >&2
else
  echo "consolidate_checkpoint.sh: $source_dir is neither a step directory (metadata.json) nor a checkpoint directory" >&2
  exit 2
fi

args=("$@")
has() { local flag; for flag in "${args[@]}"; do [ "$flag" = "$1" ] && return 0; done; return 1; }
has --format || args+=(--format hf)
has --output || args+=(--output "${step_dir}_hf")

export OMP_NUM_THREADS=1
exec "$bin/nss_consolidate" "$step_dir" "${args[@]}"
