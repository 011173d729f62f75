#!/usr/bin/env bash
# Builds the emulated-CUDA variant (ember_sim) and its kernel tests with AddressSanitizer and
# UndefinedBehaviorSanitizer, then runs them: an out-of-bounds access in a kernel (which the
# emulator runs as host code), a use-after-free of a device block, or undefined behaviour in the
# CUDA backend stops the run. The CUDA toolkit's headers are needed (not a GPU).
#
#   scripts/test-sim-asan.sh [--build-dir DIR] [--quick]
#
# --quick (what CI runs) builds and runs a subset: the emulator's own tests (kernels, fp16, bugs,
# runtime shim, streams and graphs, cuBLASLt, and the check that ASan reports an out-of-bounds
# device write) and the op harness on emulated CUDA (every op, every dtype, poisoned outputs and
# the gradient checks). The full run adds every other emulated-CUDA test.
# EMBER_SKIP_DEPS=1 skips the package installation step. EMBER_JOBS sets the parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[sim-asan] error: $*" >&2; exit 1; }

build_dir=$ROOT/build-sim-asan
quick=0
while (($#)); do
  case "$1" in
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    --quick) quick=1 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir

"$ROOT/scripts/install-deps.sh"
# The quick subset: its executables, and its tests by name (ctest -R).
QUICK_TARGETS=(test_simt_kernels test_simt_fp16 test_simt_bugs test_simt_shim test_simt_streams
  test_simt_cublaslt simt_asan_oob test_harness_sim)
QUICK_TESTS='^(Orders/|Bugs|Shim\.|Streams\.|Graphs\.|CublasLt\.|Workers\.|simt_asan_|forward/(Op|Grad|Harness)\.)'

# Release (with -O2) keeps the emulated kernels fast enough under the sanitizers.
cmake_args=(-DEMBER_CUDA=OFF -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_TOOLS=OFF)
start=$SECONDS
if ((quick)); then
  # Configure as build.sh does, then build only the subset's executables.
  source "$ROOT/scripts/common.sh"
  ember_check_ccache sim-asan
  generator=()
  [[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S "$ROOT" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DEMBER_SANITIZE=ON "${cmake_args[@]}"
  targets=$(cmake --build "$build_dir" --target help)
  [[ $targets == *test_harness_sim* ]] ||
    die "the emulated variant is not configured: the CUDA toolkit headers are missing"
  cmake --build "$build_dir" --parallel "${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
    --target "${QUICK_TARGETS[@]}"
else
  "$ROOT/scripts/build.sh" --sanitize --build-dir "$build_dir" -- "${cmake_args[@]}"
fi
echo "[sim-asan] build: $((SECONDS - start)) s"
if [[ ! -f $build_dir/simt/libember_simt.a ]]; then
  die "the emulated variant was not built: the CUDA toolkit headers are missing"
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
select=()
((quick)) && select=(-R "$QUICK_TESTS")
echo "[sim-asan] ctest -L sim (forward thread order)${select[*]:+, subset ${select[1]}}"
start=$SECONDS
(cd "$build_dir" && ctest --output-on-failure --no-tests=error -L sim -E '^(reverse|random)/' \
  "${select[@]}" -j2 --timeout 1200)
echo "[sim-asan] tests: $((SECONDS - start)) s"
