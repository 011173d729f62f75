#!/usr/bin/env bash
# Builds the emulated-CUDA variant (ember_sim) and its kernel tests with AddressSanitizer and
# UndefinedBehaviorSanitizer, then runs them: an out-of-bounds access in a kernel (which the
# emulator runs as host code), a use-after-free of a device block, or undefined behaviour in the
# CUDA backend stops the run. The CUDA toolkit's headers are needed (not a GPU).
#
#   scripts/test-sim-asan.sh [--build-dir DIR]
#
# EMBER_SKIP_DEPS=1 skips the package installation step.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[sim-asan] error: $*" >&2; exit 1; }

build_dir=$ROOT/build-sim-asan
while (($#)); do
  case "$1" in
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir

"$ROOT/scripts/install-deps.sh"
# Release (with -O2) keeps the emulated kernels fast enough under the sanitizers.
"$ROOT/scripts/build.sh" --sanitize --build-dir "$build_dir" -- \
  -DEMBER_CUDA=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_TOOLS=OFF

if [[ ! -f $build_dir/simt/libember_simt.a ]]; then
  die "the emulated variant was not built: the CUDA toolkit headers are missing"
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "[sim-asan] ctest -L sim (forward thread order)"
(cd "$build_dir" && ctest --output-on-failure --no-tests=error -L sim -E '^(reverse|random)/' \
  -j2 --timeout 1200)
