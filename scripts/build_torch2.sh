#!/usr/bin/env bash
# Builds nss_hpc against a current libtorch 2.x: the CUDA-enabled libtorch
# inside PyTorch's PyPI wheel, installed into its own venv over Debian's
# python3. build/ keeps Debian's libtorch 1.13; this build lives beside it in
# build-torch2/ (git-ignored, like every /build*/). See docs/gpu.md.
#
#   scripts/build_torch2.sh                 # torch venv + scripts/setup.sh into build-torch2/
#   scripts/build_torch2.sh --test [ARGS]   # ... then ctest ARGS there (the CPU suite)
#
# Environment: BUILD_DIR (default build-torch2), NSS_TORCH_VERSION (default
# below), NSS_TORCH_VENV (default $BUILD_DIR/torch-venv), NSS_CMAKE_ARGS (more
# cmake arguments, e.g. -DNSS_WITH_CUDA=ON), CMAKE_BUILD_TYPE and
# NSS_BUILD_TARGETS (scripts/setup.sh).
#
# Why this torch: 2.11.0's PyPI wheel is built against CUDA 13.0, the CUDA of
# the toolkit in /usr/local/cuda (13.0) and of the PyTorch on the GPU machines
# (2.11.0+cu130), and with the C++11 ABI (_GLIBCXX_USE_CXX11_ABI=1) that
# Debian's spdlog, fmt and yaml-cpp use. A wheel with the old ABI (PyPI's CUDA
# wheels before 2.7) cannot link against them: std::string in their
# interfaces is another type.
set -euo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export BUILD_DIR=${BUILD_DIR:-$NSS_ROOT/build-torch2}
TORCH_PIN=${NSS_TORCH_VERSION:-2.11.0}
# Not $BUILD_DIR/venv: that is the tokenizers venv that scripts/setup.sh makes
# for the test suite (Debian's numpy/h5py visible, which this one must not see).
# NSS_TORCH_VENV: another build's torch venv, shared (4.6 GB each).
TORCH_VENV=${NSS_TORCH_VENV:-$BUILD_DIR/torch-venv}

log() { printf '\033[1m[torch2]\033[0m %s\n' "$*"; }
fail() { printf '\033[1;31m[torch2] error:\033[0m %s\n' "$*" >&2; exit 1; }

run_tests=0
if [ "${1:-}" = "--test" ]; then
  run_tests=1
  shift
fi

# No --system-site-packages: Debian's python3-torch (1.13) must neither shadow
# nor satisfy the pin.
if ! "$TORCH_VENV/bin/python" -c "import sys, torch; sys.exit(torch.__version__.split('+')[0] != '$TORCH_PIN')" 2>/dev/null; then
  log "installing torch==$TORCH_PIN into $TORCH_VENV (about 4.6 GB with the nvidia-* wheels)"
  mkdir -p "$BUILD_DIR"
  /usr/bin/python3 -m venv --clear "$TORCH_VENV" || fail "cannot create $TORCH_VENV (install python3-venv)"
  # --no-cache-dir: the wheels are unpacked into the venv; a second copy in
  # pip's cache would only take disk.
  "$TORCH_VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir \
    "torch==$TORCH_PIN" || fail "pip could not install torch==$TORCH_PIN"
fi

# torch warns on import that numpy is missing; libtorch does not need it.
read -r torch_version cxx11_abi torch_cuda torch_prefix < <("$TORCH_VENV/bin/python" -W ignore -c "
import torch, torch.utils
print(torch.__version__, int(torch.compiled_with_cxx11_abi()), torch.version.cuda or 'none',
      torch.utils.cmake_prefix_path)" 2>/dev/null) || fail "cannot import torch from $TORCH_VENV"
log "torch $torch_version, CUDA $torch_cuda, _GLIBCXX_USE_CXX11_ABI=$cxx11_abi"
[ "$cxx11_abi" = 1 ] || fail "torch $torch_version was built with the old C++ ABI (_GLIBCXX_USE_CXX11_ABI=0),
which cannot link against Debian's spdlog/fmt/yaml-cpp: pick a wheel with the C++11 ABI (PyPI's 2.7 and later)"

# libtorch's CMake files enable CUDA (nvcc) themselves for a CUDA wheel.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
if command -v nvcc >/dev/null 2>&1; then
  log "CUDA toolkit $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') ($(command -v nvcc))"
elif [ "$torch_cuda" != none ]; then
  fail "torch $torch_version is a CUDA build, and its CMake files need the CUDA toolkit (nvcc): install it,
or put it on PATH"
fi

# Torch_DIR as well as the prefix: a cached Torch_DIR from an earlier venv
# would otherwise win. The torch directory itself (holding lib/) comes first
# on the prefix path, or TorchConfig's find_library() takes Debian's
# libtorch.so and libc10.so from the system directories.
torch_root=$(dirname "$(dirname "$torch_prefix")")
# -U: a cache from a configure without it keeps the wrong libraries.
export NSS_CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$torch_root;$torch_prefix -DTorch_DIR=$torch_prefix/Torch \
-UTORCH_LIBRARY -Uc10_LIBRARY ${NSS_CMAKE_ARGS:-}"
start=$(date +%s)
# shellcheck source=setup.sh
source "$NSS_ROOT/scripts/setup.sh"  # Debian packages, OpenBLAS, the tokenizers venv, configure, build
log "built in $(($(date +%s) - start)) s against torch $torch_version; what CMake found:"
# shellcheck disable=SC2086  # NSS_CMAKE_ARGS holds several arguments
cmake -S "$NSS_ROOT" -B "$BUILD_DIR" $NSS_CMAKE_ARGS 2>/dev/null | sed -n 's/^-- nss_hpc: /  /p'

if [ "$run_tests" = 1 ]; then
  log "running the test suite against torch $torch_version"
  ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
fi
