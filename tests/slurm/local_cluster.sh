#!/usr/bin/env bash
# A real one-node Slurm cluster on localhost, for the tests of slurm/*.sbatch.
#
#   tests/slurm/local_cluster.sh COMMAND [ARGS...]
#
# Installs Debian's slurm-wlm and munge when they are missing, starts munged,
# slurmctld and slurmd from a generated configuration in a temporary
# directory (free ports, its own state, so it never touches a site's Slurm or
# another test's cluster), runs COMMAND with SLURM_CONF pointing at that
# cluster, and on exit stops exactly the processes it started, by their
# process ids. Exits with COMMAND's status.
#
# Exits 77 (ctest SKIP_RETURN_CODE) only when Slurm cannot be installed at all
# (not root and no sudo, or apt-get fails); with CI=true or
# NSS_REQUIRE_SLURM=1 that is a failure instead, so CI never skips silently.
#
# Works inside a container as root: proctrack/linuxproc and task/none need no
# cgroups and no systemd. NSS_SLURM_TEST_TIMEOUT bounds COMMAND (default 900 s);
# NSS_KEEP_SLURM_DIR=1 keeps the directory (configuration, daemon logs).
set -euo pipefail

SKIP=77
PACKAGES=(slurm-wlm munge)
NEEDED=(munged slurmctld slurmd sbatch scontrol squeue scancel sinfo srun)

say() { printf '[local_cluster] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

cannot_install() {
  if [ "${CI:-}" = true ] || [ "${NSS_REQUIRE_SLURM:-0}" = 1 ]; then
    die "Slurm is required here (CI=true or NSS_REQUIRE_SLURM=1) but cannot be installed: $*"
  fi
  say "SKIPPED: Slurm cannot be installed on this machine: $*"
  exit "$SKIP"
}

missing_commands() {
  local cmd
  for cmd in "${NEEDED[@]}"; do
    PATH=$PATH:/usr/sbin:/sbin command -v "$cmd" >/dev/null 2>&1 || echo "$cmd"
  done
}

# apt-get install with service start-up disabled: the packages' maintainer
# scripts would otherwise start the system's munged/slurmd on hosts without
# a policy-rc.d, and this script starts its own daemons.
install_slurm() {
  [ -z "$(missing_commands)" ] && return
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null 2>&1 || ! sudo -n true 2>/dev/null; then
      cannot_install "not root and no password-less sudo to install ${PACKAGES[*]}"
    fi
    sudo="sudo -n"
  fi
  command -v apt-get >/dev/null 2>&1 || cannot_install "no apt-get (not a Debian system)"
  local policy=/usr/sbin/policy-rc.d added_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null && $sudo chmod 755 "$policy"
    added_policy=1
  fi
  say "installing ${PACKAGES[*]} from the Debian archive"
  local ok=1
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 || ok=0
  [ "$ok" = 1 ] && { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends "${PACKAGES[@]}" >&2 || ok=0; }
  [ "$added_policy" = 1 ] && $sudo rm -f "$policy"
  [ "$ok" = 1 ] || cannot_install "apt-get could not install ${PACKAGES[*]}"
  local still
  still=$(missing_commands | tr '\n' ' ')
  [ -z "$still" ] || cannot_install "installed ${PACKAGES[*]} but still missing: $still"
}

# Two TCP ports nobody listens on (several clusters may run side by side).
free_ports() {
  /usr/bin/python3 - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

install_slurm
export PATH=$PATH:/usr/sbin:/sbin
[ "$(id -u)" -eq 0 ] || cannot_install "the daemons of the local cluster must run as root (SlurmdUser=root)"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/nss_slurm.XXXXXX")
chmod 711 "$DIR"  # munged wants its socket directory searchable
mkdir -p "$DIR/state" "$DIR/spool" "$DIR/tmp"
PIDS=()  # every daemon this script started, in start order
MUNGED_PID="" SLURMCTLD_PID="" SLURMD_PID=""

# Each daemon's log file, or what it printed before it could open one.
# shellcheck disable=SC2317  # runs from the EXIT trap
show_logs() {
  local daemon log
  for daemon in munged slurmctld slurmd; do
    log=$DIR/$daemon.log
    [ -s "$log" ] || log=$DIR/$daemon.console
    [ -s "$log" ] || continue
    say "---- tail of $log"
    tail -n 25 "$log" >&2
  done
}

# Processes still carrying this cluster's SLURM_CONF in their environment:
# only the daemons, job steps and job processes of this cluster have it.
# shellcheck disable=SC2317  # runs from the EXIT trap
cluster_processes() {
  /usr/bin/python3 - "$DIR/slurm.conf" <<'PY'
import os, sys
mark = b"SLURM_CONF=" + sys.argv[1].encode()
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open("/proc/%s/environ" % pid, "rb") as f:
            if mark in f.read().split(b"\0"):
                print(pid)
    except OSError:
        pass
PY
}

# Ends every job of this cluster (only this cluster's: SLURM_CONF is ours),
# waits until every slurmstepd has gone (each removes its socket from our
# spool directory), stops the daemons newest first, by pid, and finally stops
# any process a job left behind.
# shellcheck disable=SC2317  # runs from the EXIT trap
stop_cluster() {
  local status=$? pid n strays
  trap - EXIT INT TERM
  if [ -n "$SLURMCTLD_PID" ] && kill -0 "$SLURMCTLD_PID" 2>/dev/null; then
    scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 1 60); do
      [ -z "$(squeue -h -o %i 2>/dev/null)" ] && [ -z "$(find "$DIR/spool" -type s 2>/dev/null)" ] && break
      sleep 0.5
    done
  fi
  for ((n = ${#PIDS[@]} - 1; n >= 0; n--)); do
    pid=${PIDS[$n]}
    kill -TERM "$pid" 2>/dev/null || continue
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  export -n SLURM_CONF  # from here on, nothing this script runs carries it
  strays=$(cluster_processes | tr '\n' ' ')
  if [ -n "$strays" ]; then
    say "stopping processes left by this cluster's jobs: $strays"
    # shellcheck disable=SC2086
    kill -KILL $strays 2>/dev/null || true
  fi
  if [ "$status" -ne 0 ] && [ "$status" -ne "$SKIP" ]; then show_logs; fi
  if [ "${NSS_KEEP_SLURM_DIR:-0}" = 1 ]; then
    say "kept $DIR"
  else
    rm -rf "$DIR"
  fi
  exit "$status"
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# munged: a generated key, its own socket; foreground (-F) so $! is its pid.
head -c 1024 /dev/urandom >"$DIR/munge.key"
chmod 400 "$DIR/munge.key"
munged -F --force --key-file="$DIR/munge.key" --socket="$DIR/munge.socket" \
  --pid-file="$DIR/munged.pid" --log-file="$DIR/munged.log" --seed-file="$DIR/munged.seed" \
  >"$DIR/munged.console" 2>&1 &
MUNGED_PID=$!
PIDS+=("$MUNGED_PID")
for _ in $(seq 1 40); do [ -S "$DIR/munge.socket" ] && break; sleep 0.25; done
[ -S "$DIR/munge.socket" ] || die "munged did not start (see $DIR/munged.log)"

read -r CTLD_PORT SLURMD_PORT < <(free_ports)
HOST=$(hostname -s)
# The CPUs this process may use (nproc alone would honour OMP_NUM_THREADS).
CPUS=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
# slurmd's view of the hardware, when it agrees, so slurmd has nothing to warn about.
TOPOLOGY="CPUs=$CPUS"
HARDWARE=$(slurmd -C 2>/dev/null | head -n 1)
if [[ $HARDWARE =~ CPUs=$CPUS\ (Boards=[0-9]+\ SocketsPerBoard=[0-9]+\ CoresPerSocket=[0-9]+\ ThreadsPerCore=[0-9]+) ]]; then
  TOPOLOGY="CPUs=$CPUS ${BASH_REMATCH[1]}"
fi
# The tests run 2 ranks: on a 1-CPU machine the node claims 2 CPUs
# (config_overrides keeps slurmd from draining it for having fewer).
SLURMD_PARAMETERS=""
if [ "$CPUS" -lt 2 ]; then
  TOPOLOGY="CPUs=2"
  SLURMD_PARAMETERS="SlurmdParameters=config_overrides"
fi
NODE=nsslocal
cat >"$DIR/slurm.conf" <<EOF
# Generated by tests/slurm/local_cluster.sh: one node, this host, root only.
ClusterName=nsslocal
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire also delays the restart of a requeued job (default 120 s).
AuthInfo=socket=$DIR/munge.socket,cred_expire=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
TmpFS=$DIR/tmp
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# Containers: no cgroups, no systemd.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
MpiDefault=none
SchedulerType=sched/builtin
# Look at the queue every second (the default 60 s would delay a requeued job).
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# Keep finished jobs visible to scontrol (exit codes, restart counts).
MinJobAge=3600
KillWait=10
$SLURMD_PARAMETERS
NodeName=$NODE NodeAddr=127.0.0.1 NodeHostname=$HOST $TOPOLOGY State=UNKNOWN
PartitionName=local Nodes=$NODE Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$DIR/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >"$DIR/slurmctld.console" 2>&1 &
SLURMCTLD_PID=$!
PIDS+=("$SLURMCTLD_PID")
slurmd -D -N "$NODE" -f "$SLURM_CONF" >"$DIR/slurmd.console" 2>&1 &
SLURMD_PID=$!
PIDS+=("$SLURMD_PID")

state=""
for _ in $(seq 1 120); do
  state=$(sinfo -h -n "$NODE" -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  kill -0 "$SLURMCTLD_PID" 2>/dev/null || die "slurmctld exited (see $DIR/slurmctld.log)"
  kill -0 "$SLURMD_PID" 2>/dev/null || die "slurmd exited (see $DIR/slurmd.log)"
  sleep 0.5
done
[ "$state" = idle ] || die "node $NODE is '$state', not idle, after 60 s"
say "cluster up in $DIR: slurmctld :$CTLD_PORT (pid $SLURMCTLD_PID), slurmd :$SLURMD_PORT (pid $SLURMD_PID), munged (pid $MUNGED_PID), node ${TOPOLOGY%% *}"

# The command runs in the background under its own deadline, so this script
# stays able to stop the cluster even when the command hangs, and a TERM for
# this script (bash defers traps while a foreground command runs) is acted on.
timeout --kill-after=10 "${NSS_SLURM_TEST_TIMEOUT:-900}" "$@" &
COMMAND_PID=$!
trap 'kill -TERM "$COMMAND_PID" 2>/dev/null; wait "$COMMAND_PID"; exit 143' TERM
trap 'kill -TERM "$COMMAND_PID" 2>/dev/null; wait "$COMMAND_PID"; exit 130' INT
set +e
wait "$COMMAND_PID"
status=$?
[ "$status" -eq 124 ] && say "the command ran past ${NSS_SLURM_TEST_TIMEOUT:-900} s and was stopped"
exit "$status"
