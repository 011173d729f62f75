#!/usr/bin/env bash
# Builds the CPU library and the threading tests with ThreadSanitizer and runs them: a data race
# or a lock-order inversion in the intra-op thread pool or the DataLoader's workers (prefetch
# window, persistent workers, cancelled passes, worker errors, signal masks) fails the run.
#
#   scripts/test-tsan.sh [--build-dir DIR]
#
# Runs test_threads (but its death tests, which cap the address space TSan needs), test_data (the
# DataLoader) and the parallel_for tests of test_core, each under a time limit (EMBER_TSAN_TIMEOUT
# seconds, 240 by default). EMBER_SKIP_DEPS=1 skips the package installation step; EMBER_JOBS
# sets the parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[tsan] error: $*" >&2; exit 1; }

build_dir=$ROOT/build-tsan
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
source "$ROOT/scripts/common.sh"
ember_check_ccache tsan

# -O1 -g: fast enough, with line numbers in the reports. CUDA, tools and benchmarks are left out.
flags="-fsanitize=thread -O1 -g -fno-omit-frame-pointer"
generator=()
[[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
start=$SECONDS
cmake -S "$ROOT" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
  -DEMBER_CUDA=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build_dir" --parallel "${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
  --target test_threads test_data test_core
echo "[tsan] build: $((SECONDS - start)) s"

# halt_on_error: the first race fails the test; second_deadlock_stack: both stacks of a
# lock-order inversion; scripts/tsan.supp: OpenBLAS's own threads (uninstrumented).
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$ROOT/scripts/tsan.supp}
limit=${EMBER_TSAN_TIMEOUT:-240}
status=0
start=$SECONDS
run() {
  echo "[tsan] $*"
  local left=$((limit - (SECONDS - start)))
  ((left > 0)) || { echo "[tsan] out of time before $1"; status=1; return; }
  if ! timeout "$left" "$build_dir/tests/$@" >"$build_dir/tsan-$1.log" 2>&1; then
    tail -n 60 "$build_dir/tsan-$1.log"
    echo "[tsan] $1: FAILED (log in $build_dir/tsan-$1.log)"
    status=1
  else
    tail -n 1 "$build_dir/tsan-$1.log"
  fi
}
run test_threads --gtest_filter='-ThreadsDeathTest.*'
run test_data
run test_core --gtest_filter='*Parallel*:*Thread*'
echo "[tsan] tests: $((SECONDS - start)) s"
exit $status
