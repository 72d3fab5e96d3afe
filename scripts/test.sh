#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite with ctest
# (unit, MPI at 1/2/4 ranks, end-to-end). Extra arguments go to ctest,
# e.g. scripts/test.sh -R config
set -euo pipefail
source "$(dirname "$0")/setup.sh"
say "running the test suite"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
