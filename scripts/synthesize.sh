#!/usr/bin/env bash
# The whole nss_synthesize pipeline (prepare, preflight, train, generate,
# evaluate) on this machine, the workstation counterpart of
# slurm/synthesize.sbatch:
#
#   scripts/synthesize.sh TABLE.csv [nss_synthesize arguments...]
#   e.g. scripts/synthesize.sh data/products.csv --set training.max_steps=500
#
# Installs what is missing and builds (scripts/setup.sh, as scripts/run.sh
# does), then runs `mpirun -n $NSS_RANKS build/bin/nss_synthesize TABLE.csv ...`
# in the current directory. Without --config, nss_synthesize reads
# ./configs/synthesize.yaml, or the repository's when there is none here.
#
# Signals: Ctrl-C (SIGINT) and SIGTERM for this script reach every rank as
# SIGUSR2 (mpirun would kill the ranks on a TERM), SIGUSR1 as SIGUSR1: the
# job stops at its next boundary and records what it did (exit 7 for a stop,
# 75 for USR1). Running the same command again continues: completed stages
# are skipped and the fine-tune resumes from its last checkpoint. The script
# exits with nss_synthesize's exit code (docs/operations.md, "Exit codes").
#
# Settings (environment variables):
#   NSS_RANKS        MPI ranks (default 2)
#   OMP_NUM_THREADS  threads per rank (default 1)
#   NSS_BIN_DIR      a directory with built binaries (nss_synthesize): when
#                    set, setup.sh (install and build) is skipped and these
#                    are run instead of build/bin's
set -uo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Not `say`: setup.sh defines its own.
report() { printf '\033[1m[synthesize]\033[0m %s\n' "$*"; }

if [ $# -lt 1 ]; then
  report "usage: scripts/synthesize.sh TABLE.csv [nss_synthesize arguments...]"
  exit 2
fi

if [ -n "${NSS_BIN_DIR:-}" ]; then
  if [ ! -x "$NSS_BIN_DIR/nss_synthesize" ]; then
    report "NSS_BIN_DIR=$NSS_BIN_DIR has no nss_synthesize: build it, or unset NSS_BIN_DIR to let setup.sh build"
    exit 2
  fi
  BIN_DIR=$NSS_BIN_DIR
else
  # setup.sh runs under set -e and changes no directory; it sets BUILD_DIR.
  # shellcheck source-path=SCRIPTDIR source=setup.sh
  source "$NSS_ROOT/scripts/setup.sh"
  set +e
  BIN_DIR=$BUILD_DIR/bin
fi

args=("$@")
has_config=0
for arg in "$@"; do
  case "$arg" in --config | --config=*) has_config=1 ;; esac
done
if [ "$has_config" = 0 ] && [ ! -f configs/synthesize.yaml ]; then
  args+=(--config "$NSS_ROOT/configs/synthesize.yaml")
fi

MPI_ARGS=(-n "${NSS_RANKS:-2}" --oversubscribe)
[ "$(id -u)" -eq 0 ] && MPI_ARGS+=(--allow-run-as-root)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
report "running: mpirun ${MPI_ARGS[*]} $BIN_DIR/nss_synthesize ${args[*]}"

# Signals. mpirun forwards SIGUSR1 and SIGUSR2 to every rank unchanged but
# aborts the ranks on a SIGTERM or SIGINT, so those reach the ranks as
# SIGUSR2, which nss_synthesize treats exactly like SIGTERM. mpirun runs in a
# session of its own (setsid): a Ctrl-C at the terminal then reaches only this
# script, not mpirun and the ranks directly.
MPIRUN_PID=""
INTERRUPTED=0   # set when a trapped signal cut a `wait` short
# shellcheck disable=SC2317  # runs from the traps
forward() {
  local name=$1 to=$2
  INTERRUPTED=1
  report "received SIG$name: forwarding SIG$to to mpirun (pid $MPIRUN_PID)"
  kill -s "$to" "$MPIRUN_PID" 2>/dev/null || report "mpirun has already exited"
}

# In the background: bash runs traps only between commands, so a foreground
# mpirun would hold every signal until it had exited. The traps are set
# first and MPIRUN_PID right after the start, and a signal in between is
# forwarded once it is known.
PENDING=()
trap 'INTERRUPTED=1; PENDING+=(USR1)' USR1
trap 'INTERRUPTED=1; PENDING+=(USR2)' TERM INT
setsid mpirun "${MPI_ARGS[@]}" "$BIN_DIR/nss_synthesize" "${args[@]}" &
MPIRUN_PID=$!
trap 'forward USR1 USR1' USR1
trap 'forward TERM USR2' TERM
trap 'forward INT USR2' INT
for sig in ${PENDING[@]+"${PENDING[@]}"}; do
  report "forwarding SIG$sig to mpirun (pid $MPIRUN_PID)"
  kill -s "$sig" "$MPIRUN_PID" 2>/dev/null || true
done

# `wait` returns 128+n when a trapped signal interrupts it, while mpirun runs
# on: wait again until mpirun itself has ended.
while :; do
  INTERRUPTED=0
  wait "$MPIRUN_PID"
  status=$?
  if [ "$INTERRUPTED" != 1 ] || [ "$status" -le 128 ]; then break; fi
  kill -0 "$MPIRUN_PID" 2>/dev/null && continue
  # It ended while we were interrupted: its status was kept by the shell
  # (127 means the interrupted wait had already collected it).
  wait "$MPIRUN_PID"
  again=$?
  [ "$again" -ne 127 ] && status=$again
  break
done
trap - USR1 TERM INT

report "nss_synthesize exited with code $status"
exit "$status"
