#!/usr/bin/env bash
# Configures and builds ember with CMake + Ninja (ccache is picked up by CMakeLists.txt when found).
#
#   scripts/build.sh [--debug|--release] [--sanitize] [--build-dir DIR] [-- CMAKE_ARGS...]
#
# Release is the default. Without --build-dir the tree goes to build/ (Release), build-debug/
# (Debug), with -asan appended for --sanitize, so the variants never overwrite each other.
# EMBER_JOBS overrides the number of parallel jobs (default: nproc).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
die() { echo "[build] error: $*" >&2; exit 1; }

build_type=Release
sanitize=OFF
build_dir=""
extra=()
while (($#)); do
  case "$1" in
    --debug) build_type=Debug ;;
    --release) build_type=Release ;;
    --sanitize) sanitize=ON ;;
    --build-dir)
      (($# >= 2)) || die "--build-dir needs a directory"
      build_dir=$2
      shift
      ;;
    --build-dir=*) build_dir=${1#*=} ;;
    -h | --help) usage; exit 0 ;;
    --) shift; extra=("$@"); break ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done

if [[ -z "$build_dir" ]]; then
  build_dir=$ROOT/build
  [[ $build_type == Debug ]] && build_dir+=-debug
  [[ $sanitize == ON ]] && build_dir+=-asan
fi
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir

command -v cmake >/dev/null 2>&1 || die "cmake not found; run scripts/install-deps.sh"
jobs=${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}

source "$ROOT/scripts/common.sh"
ember_check_ccache build

args=(-S "$ROOT" -B "$build_dir" -DCMAKE_BUILD_TYPE="$build_type" -DEMBER_SANITIZE="$sanitize")
# The generator is fixed when a tree is first configured; naming another one later is an error.
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  if command -v ninja >/dev/null 2>&1; then
    args+=(-G Ninja)
  else
    echo "[build] ninja not found: using CMake's default generator"
  fi
fi

echo "[build] configure: $build_type, sanitize=$sanitize, in $build_dir"
cmake "${args[@]}" "${extra[@]}"
echo "[build] build with $jobs jobs"
start=$SECONDS
cmake --build "$build_dir" --parallel "$jobs"
echo "[build] done in $((SECONDS - start)) s: $build_dir"
