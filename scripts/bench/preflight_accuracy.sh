#!/usr/bin/env bash
# Preflight accuracy benchmark (docs/preflight.md, "Accuracy"): predicted vs
# measured synthetic vs real training peak, and the verdict time, across
# configurations (micro-batch 1-8, seq 64-1024, 2-8 layers, 1-4 ranks,
# fp32/bf16, LoRA on/off, tied/untied). Needs a build (build/bin) and
# Debian's python3-h5py. Arguments go to preflight_accuracy.py.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec /usr/bin/python3 scripts/bench/preflight_accuracy.py --bin "${BUILD_DIR:-build}/bin" "$@"
