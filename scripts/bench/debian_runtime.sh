#!/usr/bin/env bash
# Collects, from this machine's installed Debian packages, every shared
# library that the given programs need and a machine with PyTorch alone
# lacks (Open MPI with its launcher, plugins and help files, HDF5, yaml-cpp,
# spdlog/fmt, xxHash and what they pull in), into DEST as the packages lay
# them out (DEST/usr/lib/x86_64-linux-gnu/..., DEST/usr/bin/mpirun, ...):
# the Open MPI packages whole, of the others the libraries ldd names.
# Left out: glibc, libstdc++ and libgcc (every image has them, newer), and
# libtorch, CUDA and NCCL (the image's PyTorch brings the ones it was built
# with). Prints the packages they come from and the size.
#
#   scripts/bench/debian_runtime.sh DEST PROGRAM...
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: debian_runtime.sh DEST PROGRAM..." >&2; exit 2; }
dest=$1
shift
command -v dpkg-query >/dev/null || { echo "debian_runtime: needs dpkg (a Debian machine)" >&2; exit 2; }
mkdir -p "$dest"

# Provided by the GPU image: its C runtime, and its PyTorch's CUDA and NCCL.
SKIP_PACKAGES='^(libc6|libstdc\+\+6|libgcc-s1|libnccl2|libnccl-dev|cuda-.*|libcu.*|libnv.*)$'
SKIP_PATHS='/torch/|/nvidia/|/usr/local/cuda'
# Open MPI is launched and loads plugins, which ldd of the programs cannot see.
LAUNCHER_PACKAGES=(openmpi-bin openmpi-common libopenmpi3 libpmix2)

# Which package installed each file, read once (dpkg-query -S per library
# would take minutes); /lib and /usr/lib are the same on a merged /usr.
declare -A owner=()
while IFS= read -r -d '' list; do
  package=$(basename "$list" .list)
  package=${package%%:*}
  while read -r file; do
    owner[$file]=$package
    case $file in /lib/* | /lib64/*) owner[/usr$file]=$package ;; /usr/lib/*) owner[${file#/usr}]=$package ;; esac
  done <"$list"
done < <(find /var/lib/dpkg/info -name '*.list' -print0)
owner_of() {
  local path=$1
  echo "${owner[$path]:-${owner[$(readlink -f "$path")]:-}}"
}

declare -A taken=() needed=()
queue=("$@")
for package in "${LAUNCHER_PACKAGES[@]}"; do
  dpkg-query -W "$package" >/dev/null 2>&1 || { echo "debian_runtime: $package is not installed" >&2; exit 2; }
  taken[$package]=1
  while read -r file; do
    [ -f "$file" ] && [ ! -L "$file" ] && { [[ $file == *.so* ]] || [[ $file == */bin/* ]]; } && queue+=("$file")
  done < <(dpkg-query -L "$package")
done

# ldd names a file's whole closure: the libraries are those, one by one.
for file in "${queue[@]}"; do
  while read -r library; do
    [ -n "${needed[$library]:-}" ] && continue
    [[ $library =~ $SKIP_PATHS ]] && continue
    package=$(owner_of "$library")
    [ -n "$package" ] || continue
    [[ $package =~ $SKIP_PACKAGES ]] && continue
    needed[$library]=$package
  done < <(ldd "$file" 2>/dev/null | sed -n 's/^.*=> \(\/[^ ]*\) .*$/\1/p')
done

copy() {  # a file (a link and what it names) to the same place under DEST; /lib is /usr/lib
  local file=$1 target
  target=$dest/usr${file#/usr}
  mkdir -p "$(dirname "$target")"
  cp -a "$file" "$target"
  if [ -L "$file" ]; then
    local real
    real=$(readlink -f "$file")
    target=$dest/usr${real#/usr}
    mkdir -p "$(dirname "$target")"
    cp -a "$real" "$target"
  fi
}
for package in "${LAUNCHER_PACKAGES[@]}"; do
  while read -r file; do
    case $file in
      */share/doc/* | */share/man/* | */share/lintian/* | */share/locale/* | */include/* | /etc/*) continue ;;
    esac
    [ -f "$file" ] || [ -L "$file" ] || continue
    copy "$file"
  done < <(dpkg-query -L "$package")
done
for library in "${!needed[@]}"; do
  copy "$library"
  taken[${needed[$library]}]=1
done
echo "debian_runtime: from $(printf '%s\n' "${!taken[@]}" | sort | tr '\n' ' ')"
# Absolute links (Debian's alternatives: mpirun -> /etc/alternatives/mpirun)
# point into DEST, where what they name is.
while read -r link; do
  resolved=$(readlink -f "$link" || true)
  inside=$dest/usr${resolved#/usr}
  if [ -e "$inside" ] && [ -n "$resolved" ]; then
    ln -sfn "$(realpath --relative-to="$(dirname "$link")" "$inside")" "$link"
  else
    rm -f "$link"
  fi
done < <(find "$dest" -type l -lname '/*')
for launcher in mpirun mpiexec; do
  ln -sfn orterun "$dest/usr/bin/$launcher"
done
echo "debian_runtime: ${#needed[@]} libraries of ${#taken[@]} packages, $(du -sm "$dest" | cut -f1) MiB, into $dest"
