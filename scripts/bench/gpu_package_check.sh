#!/usr/bin/env bash
# Runs the GPU package (scripts/bench/gpu_package.sh) here as a machine with
# PyTorch and nothing else would: in a mount namespace of its own, every
# system copy of a Debian library the package carries is hidden (an empty
# file bound over it; Open MPI's plugin and help directories too), except
# those this check's own tools need, and gpu_backlog.sh --rehearse runs
# PARTS (default: smoke async) from the package on the CPU. A library the
# package lacks, a wrong path in env.sh or a launcher that does not relocate
# fails here instead of on the device. Needs root (unshare -m) and a python3
# with torch first on PATH (the torch venv of the build).
#
#   scripts/bench/gpu_package_check.sh PACKAGE_DIR OUT [PART...]
set -euo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: gpu_package_check.sh PACKAGE_DIR OUT [PART...]" >&2; exit 2; }
package=$(cd "$1" && pwd)
out=$2
shift 2
[ $# -gt 0 ] || set -- smoke async

if [ "${NSS_PACKAGE_CHECK_INSIDE:-}" != 1 ]; then
  [ "$(id -u)" = 0 ] || { echo "gpu_package_check: needs root for a mount namespace (unshare -m)" >&2; exit 2; }
  exec env NSS_PACKAGE_CHECK_INSIDE=1 unshare -m "$0" "$package" "$out" "$@"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/nss_package_check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/unpacked" "$scratch/empty"
tar -C "$scratch/unpacked" --strip-components=1 -xJf "$package/payload.tar.xz"
: >"$scratch/empty_file"

# What the check's own tools load stays visible: a real image has its own.
tools=(bash sh grep sed tar xz find sort cut tr date mkdir rm cp cat ls timeout setsid sleep pkill kill hostname
  git readelf ldd python3)
python_dynload=$(python3 -c 'import os, _ctypes; print(os.path.dirname(_ctypes.__file__))')
keep=$(
  for file in "${tools[@]}" "$python_dynload"/*.so; do
    path=$(command -v "$file" || echo "$file")
    ldd "$(readlink -f "$path")" 2>/dev/null || true
  done | sed -n 's/^.*=> \(\/[^ ]*\) .*$/\1/p'
)
keep=$(xargs -r readlink -f <<<"$keep" | sort -u || true)
hidden=0
while read -r system; do
  grep -qxF "$system" <<<"$keep" && continue
  mount --bind "$scratch/empty_file" "$system"
  hidden=$((hidden + 1))
done < <(
  find "$scratch/unpacked/deb" -type f -name '*.so*' | while read -r carried; do
    system=$(readlink -f "/usr/${carried#"$scratch/unpacked/deb/usr/"}" 2>/dev/null) || continue
    [ -f "$system" ] && echo "$system"
  done | sort -u
)
for dir in /usr/share/openmpi /usr/lib/x86_64-linux-gnu/openmpi /usr/lib/x86_64-linux-gnu/pmix2; do
  [ -d "$dir" ] && mount --bind "$scratch/empty" "$dir"
done
echo "gpu_package_check: $hidden system libraries hidden, $(wc -l <<<"$keep") kept for the check's tools"
TMPDIR=$scratch "$NSS_ROOT/scripts/bench/gpu_backlog.sh" --rehearse --package "$package" "$out" "$@"
