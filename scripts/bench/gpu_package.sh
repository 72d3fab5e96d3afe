#!/usr/bin/env bash
# The package the GPU backlog (scripts/bench/gpu_backlog.sh) runs from on a
# bare GPU machine that has PyTorch and nothing else: the binaries the backlog
# names (gpu_backlog.sh --list-binaries), built here against that PyTorch's
# libtorch and stripped; the Debian libraries the machine lacks
# (scripts/bench/debian_runtime.sh); the default data and a tokenizer.json;
# an env.sh that points the loader and Open MPI at them. All of it in one
# compressed payload, OUT/payload.tar.xz. The working tree travels beside it,
# so the whole (tree + OUT) must stay under the device tool's 64 MiB: the
# script fails, naming the largest parts, before anything is carried.
#
#   scripts/bench/gpu_package.sh [--build] [--bin DIR] [--base-bin DIR] [--out DIR]
#
# --build first makes the CUDA build in build-gpu/ (Release, sm_90, against
# PyTorch 2.11.0+cu130's libtorch: scripts/build_torch2.sh, with only the
# backlog's targets); never run by setup or the test suite. --bin (default
# build-gpu/bin) takes an existing CUDA build. --base-bin: a CUDA build of
# the commit before tensor parallelism (bebecc3; docs/gpu.md), whose nss_hpc
# travels as nss_hpc_base for the backlog's tensor_parallel part. --out: default gpu-package/
# (git-ignored). On the GPU machine: `scripts/bench/gpu_backlog.sh OUT`
# unpacks it itself (device tool: carry gpu-package).
set -euo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LIMIT_BYTES=$((64 * 1024 * 1024))
build=0 bin=$NSS_ROOT/build-gpu/bin base_bin="" out=$NSS_ROOT/gpu-package
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=1 ;;
    --bin) bin=${2:?--bin needs a directory}; shift ;;
    --base-bin) base_bin=${2:?--base-bin needs a directory}; shift ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    *) echo "gpu_package: unknown argument $1 (use --build, --bin DIR, --base-bin DIR, --out DIR)" >&2; exit 2 ;;
  esac
  shift
done
log() { printf '\033[1m[gpu_package]\033[0m %s\n' "$*"; }
fail() { printf '\033[1;31m[gpu_package] error:\033[0m %s\n' "$*" >&2; exit 1; }

# --out is replaced whole: only a directory that holds nothing or an earlier package.
if [ -e "$out" ]; then
  [ -d "$out" ] || fail "--out $out is not a directory: give a new directory or an earlier package"
  leftover=$(find "$out" -mindepth 1 -maxdepth 1 ! -name payload.tar.xz ! -name MANIFEST | head -3)
  [ -z "$leftover" ] ||
    fail "--out $out holds files that are not a package ($(echo "$leftover" | tr '\n' ' ')): give a new directory"
fi

mapfile -t binaries < <("$NSS_ROOT/scripts/bench/gpu_backlog.sh" --list-binaries)
if [ "$build" = 1 ]; then
  log "CUDA build in build-gpu/ of: ${binaries[*]} nss_prepare_data"
  BUILD_DIR=$NSS_ROOT/build-gpu CMAKE_BUILD_TYPE=Release \
    NSS_TORCH_VENV=${NSS_TORCH_VENV:-$NSS_ROOT/build-torch2/torch-venv} \
    NSS_CMAKE_ARGS="-DNSS_WITH_CUDA=ON -DNSS_WITH_NCCL=ON -DCMAKE_CUDA_ARCHITECTURES=90 ${NSS_CMAKE_ARGS:-}" \
    NSS_BUILD_TARGETS="${binaries[*]} nss_prepare_data" "$NSS_ROOT/scripts/build_torch2.sh"
  bin=$NSS_ROOT/build-gpu/bin
fi

# --- what travels must be a CUDA build of every binary the backlog runs ------
[ -d "$bin" ] || fail "no build at $bin: run scripts/bench/gpu_package.sh --build (docs/gpu.md)"
missing=()
for name in "${binaries[@]}"; do [ -x "$bin/$name" ] || missing+=("$name"); done
[ ${#missing[@]} = 0 ] || fail "$bin lacks ${missing[*]}: build them (--build)"
readelf -d "$bin/nss_hpc" | grep -q 'libtorch_cuda.so\|libc10_cuda.so' ||
  fail "$bin/nss_hpc is not linked against a CUDA libtorch: a CPU build cannot validate anything on a GPU (--build)"
if [ -n "$base_bin" ]; then
  [ -x "$base_bin/nss_hpc" ] || fail "--base-bin $base_bin has no nss_hpc: build the base commit there (docs/gpu.md)"
  readelf -d "$base_bin/nss_hpc" | grep -q 'libtorch_cuda.so\|libc10_cuda.so' ||
    fail "$base_bin/nss_hpc is not linked against a CUDA libtorch: build the base commit with the CUDA options"
fi

stage=$(mktemp -d "${TMPDIR:-/tmp}/nss_gpu_package.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/nss-gpu
mkdir -p "$root/bin" "$root/libexec" "$root/data" "$root/models"

log "stripping ${#binaries[@]} binaries"
for name in "${binaries[@]}"; do strip -o "$root/libexec/$name" "$bin/$name"; done
if [ -n "$base_bin" ]; then
  binaries+=(nss_hpc_base)
  strip -o "$root/libexec/nss_hpc_base" "$base_bin/nss_hpc"
fi

log "collecting the Debian libraries they need"
"$NSS_ROOT/scripts/bench/debian_runtime.sh" "$root/deb" "$root/libexec/"* | tail -1

# Only the package's programs see its libraries: the machine's own (python3,
# tar, grep) keep theirs. bin/NAME runs libexec/NAME, bin/mpirun Open MPI's.
cat >"$root/bin/.with-libraries" <<'WRAP'
#!/bin/sh
root=$(cd "$(dirname "$0")/.." && pwd)
name=$(basename "$0")
: "${NSS_LIBRARY_PATH:?source env.sh first}"
export LD_LIBRARY_PATH="$NSS_LIBRARY_PATH${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
case $name in
  mpirun | mpiexec) exec "$root/deb/usr/bin/orterun" "$@" ;;
  *) exec "$root/libexec/$name" "$@" ;;
esac
WRAP
chmod +x "$root/bin/.with-libraries"
for name in "${binaries[@]}" mpirun mpiexec; do ln -s .with-libraries "$root/bin/$name"; done

log "the default data and a tokenizer"
prepare=$bin/nss_prepare_data
[ -x "$prepare" ] || prepare=$NSS_ROOT/build/bin/nss_prepare_data
NSS_PREPARE_DATA=$prepare "$NSS_ROOT/scripts/prepare_default_data.sh" "$root/data" >/dev/null
tokenizer=""
for dir in "$(dirname "$bin")" "$NSS_ROOT/build"; do
  [ -f "$dir/models/smollm2-135m-instruct/tokenizer.json" ] && { tokenizer=$dir/models/smollm2-135m-instruct/tokenizer.json; break; }
done
[ -n "$tokenizer" ] || fail "no tokenizer.json of SmolLM2 in $(dirname "$bin")/models or build/models: run scripts/setup.sh"
cp "$tokenizer" "$root/models/tokenizer.json"

# Paths computed on the GPU machine: where its PyTorch is, where this was unpacked.
cat >"$root/env.sh" <<'ENV'
# Sourced by gpu_backlog.sh: the package's bin/ (its programs and mpirun) on
# PATH, and for them the package's libraries first, then the machine's
# PyTorch (libtorch, CUDA runtime, cuBLAS, NCCL of its wheels).
_nss_root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
_nss_deb=$_nss_root/deb/usr
_nss_site=$(python3 -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))') || {
  echo "env.sh: python3 cannot import torch: this package runs against the machine's PyTorch" >&2
  return 1
}
_nss_libs=$_nss_deb/lib/x86_64-linux-gnu:$_nss_deb/lib/x86_64-linux-gnu/openmpi/lib:$_nss_site/torch/lib
for _nss_dir in "$_nss_site"/nvidia/*/lib "$_nss_site"/nvidia/*/*/lib; do
  [ -d "$_nss_dir" ] && _nss_libs=$_nss_libs:$_nss_dir
done
export NSS_LIBRARY_PATH=$_nss_libs  # bin/'s wrappers put it first for the package's programs
export PATH=$_nss_root/bin:$PATH
export OPAL_PREFIX=$_nss_deb
export OMPI_MCA_mca_base_component_path=$_nss_deb/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
export PMIX_INSTALL_PREFIX=$_nss_deb/lib/x86_64-linux-gnu/pmix2
export PMIX_MCA_mca_base_component_path=$_nss_deb/lib/x86_64-linux-gnu/pmix2/lib/pmix
unset _nss_root _nss_deb _nss_site _nss_libs _nss_dir
ENV

{
  echo "revision $(git -C "$NSS_ROOT" rev-parse --short HEAD)$(git -C "$NSS_ROOT" diff --quiet || echo ' (with uncommitted changes)')"
  echo "built against $(sed -n 's/^Torch_DIR:[A-Z]*=//p' "$(dirname "$bin")/CMakeCache.txt" 2>/dev/null || echo 'an unknown libtorch')"
  echo "made $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname)"
  (cd "$root" && find . -type f -printf '%s %p\n' | sort -k2)
} >"$root/MANIFEST"

log "compressing"
rm -rf "$out"
mkdir -p "$out"
XZ_OPT="-6 -T0" tar -C "$stage" -cJf "$out/payload.tar.xz" nss-gpu
cp "$root/MANIFEST" "$out/MANIFEST"

# --- the 64 MiB the device tool carries: the working tree and this -----------
tree_bytes=$(cd "$NSS_ROOT" && git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
package_bytes=$(du -cb "$out" | tail -1 | cut -f1)
total=$((tree_bytes + package_bytes))
log "working tree $((tree_bytes / 1048576)) MiB + package $((package_bytes / 1048576)) MiB = $((total / 1048576)) MiB of 64"
if [ "$total" -gt "$LIMIT_BYTES" ]; then
  echo "largest in the package (uncompressed):" >&2
  (cd "$root" && du -ab . | sort -rn | sed -n '2,11p') >&2
  rm -rf "$out"
  fail "the carried tree would be $((total / 1048576)) MiB, over the device tool's 64 MiB: leave a binary out or shrink the data"
fi
# The package alone, as the device will run it (root: a mount namespace).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
  log "checking the package with the system's copies of its libraries hidden"
  torch_bin=${NSS_TORCH_VENV:-$NSS_ROOT/build-torch2/torch-venv}/bin
  if ! PATH=$torch_bin:$PATH "$NSS_ROOT/scripts/bench/gpu_package_check.sh" "$out" "$stage/check" \
    >"$stage/check.log" 2>&1; then
    tail -30 "$stage/check.log" >&2
    rm -rf "$out"
    fail "the package does not run on its own (gpu_package_check.sh): see above"
  fi
  grep -E '^gpu_package_check|^\*\*' "$stage/check.log"
else
  log "not checked on its own: scripts/bench/gpu_package_check.sh needs root"
fi
log "ready: $out (carry it: run(..., carry=[\"gpu-package\"]); then scripts/bench/gpu_backlog.sh OUT)"
