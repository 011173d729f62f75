#!/usr/bin/env bash
# Checks that another project can use ember, with the consumer in tests/package/: (a) ember
# installed into a prefix + find_package(ember CONFIG REQUIRED), (b) add_subdirectory, and, from a
# build tree with the shared library, (c) the .deb and .tar.gz that `cpack` makes: unpacked into
# an empty root, the consumer is built against it with CMake (the CUDA toolkit hidden from
# find_package) and with `pkg-config --cflags --libs ember`, and runs with no CUDA library
# visible; the package's files must not name the build machine's paths.
#
#   scripts/check-package.sh [--build-dir DIR] [--work-dir DIR]
#
# --build-dir: an ember build tree (not sanitized) to install from; it is brought up to date
#              first. Without it a library-only ember is configured and built in the work dir.
# --work-dir:  where prefix and consumer builds go (default: a temporary directory, removed on
#              exit); reusing one makes later runs incremental.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONSUMER=$ROOT/tests/package

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
log() { echo "[check-package] $*"; }
die() { echo "[check-package] FAILED: $*" >&2; exit 1; }

build_dir=""
work_dir=""
while (($#)); do
  case "$1" in
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    --work-dir) (($# >= 2)) || die "--work-dir needs a directory"; work_dir=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done

if [[ -z "$work_dir" ]]; then
  work_dir=$(mktemp -d "${TMPDIR:-/tmp}/ember-package.XXXXXX")
  trap 'rm -rf "$work_dir"' EXIT
fi
mkdir -p "$work_dir"
work_dir=$(cd "$work_dir" && pwd)
jobs=${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}
source "$ROOT/scripts/common.sh"
ember_check_ccache check-package

gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
# The consumer is compiled with the compiler that built ember, so both sides share one ABI.
compiler=()

# ---- (a) install, then find_package ----------------------------------------------------------
if [[ -n "$build_dir" ]]; then
  build_dir=$(cd "$build_dir" && pwd)
  [[ -f "$build_dir/CMakeCache.txt" ]] || die "$build_dir is not a configured build tree"
  log "bringing $build_dir up to date"
  cmake --build "$build_dir" --parallel "$jobs" >"$work_dir/ember-build.log" 2>&1 ||
    { cat "$work_dir/ember-build.log"; die "building ember in $build_dir"; }
else
  build_dir=$work_dir/ember-build
  log "building a library-only ember in $build_dir"
  cmake -S "$ROOT" -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_BUILD_TESTS=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_TOOLS=OFF \
    >"$work_dir/ember-configure.log" 2>&1 ||
    { cat "$work_dir/ember-configure.log"; die "configuring ember"; }
  cmake --build "$build_dir" --parallel "$jobs" >"$work_dir/ember-build.log" 2>&1 ||
    { cat "$work_dir/ember-build.log"; die "building ember"; }
fi
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
[[ -n "$cxx" ]] && compiler=(-DCMAKE_CXX_COMPILER="$cxx")

# Runs one consumer configuration: configure, build, run the app. $1 names it, the rest are
# cache arguments for tests/package.
run_consumer() {
  local name=$1 dir=$work_dir/consumer-$1
  shift
  log "($name) configure + build the consumer"
  cmake -S "$CONSUMER" -B "$dir" "${gen[@]}" "${compiler[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON "$@" >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; die "($name) configuring the consumer"; }
  cmake --build "$dir" --parallel "$jobs" >"$dir.build.log" 2>&1 ||
    { cat "$dir.build.log"; die "($name) building the consumer"; }
  local out
  out=$("$dir/app" 2>&1) || { echo "$out"; die "($name) the consumer's program failed"; }
  log "($name) run: $out"
}

prefix=$work_dir/prefix
rm -rf "$prefix"
log "(installed) cmake --install into $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work_dir/install.log" 2>&1 ||
  { cat "$work_dir/install.log"; die "installing ember"; }
run_consumer installed -DCMAKE_PREFIX_PATH="$prefix"

# The installed consumer must have found the installed package, and nothing from the checkout.
found=$(sed -n 's/^ember_DIR:PATH=//p' "$work_dir/consumer-installed/CMakeCache.txt")
[[ "$found" == "$prefix"/* ]] || die "(installed) find_package used '$found', not $prefix"
if grep -rqF -e "$ROOT/include" -e "$ROOT/src" "$work_dir/consumer-installed" \
  --include=build.ninja --include=flags.make; then
  die "(installed) the consumer's compile lines point into the source tree $ROOT"
fi

# ---- (b) add_subdirectory ----------------------------------------------------------------------
run_consumer subdirectory -DEMBER_SOURCE_DIR="$ROOT"

# ---- (c) the packages --------------------------------------------------------------------------
if [[ -f "$build_dir/CPackConfig.cmake" && -e "$build_dir/libember.so" ]]; then
  log "(package) cpack -G DEB;TGZ"
  rm -f "$build_dir"/ember_*.deb "$build_dir"/ember-*.tar.gz
  (cd "$build_dir" && cpack -G "DEB;TGZ") >"$work_dir/cpack.log" 2>&1 ||
    { cat "$work_dir/cpack.log"; die "cpack"; }
  deb=$(ls "$build_dir"/ember_*.deb)
  tgz=$(ls "$build_dir"/ember-*.tar.gz)
  root=$work_dir/deb-root
  rm -rf "$root" && mkdir -p "$root"
  dpkg-deb -x "$deb" "$root"
  # The tarball holds the same files.
  diff <(dpkg-deb -c "$deb" | awk '{print $6}' | grep -v '/$' | sed 's|^\./usr/||' | sort) \
    <(tar tzf "$tgz" | grep -v '/$' | sed 's|^[^/]*/||' | sort) >"$work_dir/tgz.diff" ||
    { cat "$work_dir/tgz.diff"; die "(package) the .deb and the .tar.gz hold different files"; }
  # Nothing in the installed CMake and pkg-config files points at this machine's build.
  if grep -rlF -e "$ROOT" -e "$build_dir" -e "${CUDA_HOME:-/usr/local/cuda}" \
    "$root/usr/lib/cmake" "$root/usr/lib/pkgconfig"; then
    die "(package) installed files name the build machine's paths"
  fi
  readelf -d "$root/usr/lib/libember.so" | grep -q "SONAME.*libember\.so\.[0-9]" ||
    die "(package) libember.so has no versioned SONAME"
  if readelf -d "$root/usr/lib/libember.so" "$root/usr/bin/ember" |
    grep -E 'NEEDED.*(cublas|cudnn|nccl|nvidia-ml|libcudart|libcuda[.])'; then
    die "(package) a CUDA library is linked"
  fi
  # What a machine without the CUDA toolkit and without CUDA libraries sees.
  no_cuda=(env LD_LIBRARY_PATH="$root/usr/lib" CUDA_HOME=/nonexistent CUDA_PATH=/nonexistent
    EMBER_CUBLASLT_LIBRARY=none EMBER_CUDNN_LIBRARY=none EMBER_NCCL_LIBRARY=none)
  dir=$work_dir/consumer-deb
  log "(package) the consumer with find_package, CUDA toolkit hidden"
  cmake -S "$CONSUMER" -B "$dir" "${gen[@]}" "${compiler[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON -DCMAKE_PREFIX_PATH="$root/usr" \
    -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >"$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; die "(package) configuring the consumer"; }
  cmake --build "$dir" >"$dir.build.log" 2>&1 ||
    { cat "$dir.build.log"; die "(package) building the consumer"; }
  readelf -d "$dir/app" | grep -q 'NEEDED.*libember\.so' ||
    die "(package) the consumer did not link libember.so"
  out=$("${no_cuda[@]}" "$dir/app" 2>&1) || { echo "$out"; die "(package) the consumer failed"; }
  log "(package) cmake consumer: $out"
  log "(package) the consumer with pkg-config"
  pc=$root/usr/lib/pkgconfig
  flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs ember) ||
    die "(package) pkg-config does not know ember"
  # shellcheck disable=SC2086  # the flags are words
  "${cxx:-c++}" -O1 -o "$work_dir/app-pc" "$CONSUMER/main.cpp" $flags ||
    die "(package) building the consumer with pkg-config flags: $flags"
  out=$("${no_cuda[@]}" "$work_dir/app-pc" 2>&1) || { echo "$out"; die "(package) pkg-config consumer failed"; }
  log "(package) pkg-config consumer: $out"
fi

log "ok: find_package, add_subdirectory and the packages all work"
