#!/usr/bin/env bash
# The default local run: installs what is missing, builds, prepares the
# default dataset (scripts/prepare_default_data.sh) and trains the tiny default model on 2 ranks:
#   mpirun -n 2 build/bin/nss_hpc configs/run.yaml
# Extra arguments go to nss_hpc, e.g. scripts/run.sh --set training.max_steps=20
set -euo pipefail
source "$(dirname "$0")/setup.sh"
cd "$NSS_ROOT"
# data/default/{train,val}.h5 from text every Debian machine has (docs/data.md).
NSS_BIN_DIR="$BUILD_DIR/bin" scripts/prepare_default_data.sh data/default

MPI_ARGS=(-n "${NSS_RANKS:-2}" --oversubscribe)
[ "$(id -u)" -eq 0 ] && MPI_ARGS+=(--allow-run-as-root)
say "running: mpirun ${MPI_ARGS[*]} build/bin/nss_hpc configs/run.yaml $*"
exec env OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}" mpirun "${MPI_ARGS[@]}" "$BUILD_DIR/bin/nss_hpc" configs/run.yaml "$@"
