#!/usr/bin/env bash
# Runs the CPU tests that read files (safetensors, checkpoints, IDX, datasets and the DataLoader,
# the hostile-input tests, and the replay of the fuzzing corpora) under AddressSanitizer and
# UndefinedBehaviorSanitizer. It shares the clang tree of scripts/fuzz.sh (build-fuzz/, same
# configuration: ASan + UBSan at -O1), whose library objects serve both, so after that script only
# the test executables are built here. Each test is time-boxed (ctest --timeout).
#
#   scripts/test-cpu-asan.sh [--build-dir DIR]
#
# EMBER_SKIP_DEPS=1 skips the package installation step. EMBER_JOBS sets the parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[cpu-asan] error: $*" >&2; exit 1; }

build_dir=$ROOT/build-fuzz
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
command -v clang++ >/dev/null 2>&1 || die "clang++ not found (scripts/install-deps.sh installs it)"
TARGETS=(test_io test_data test_hostile_input make_fuzz_corpus fuzz_replay)
# Every test of those executables (their suites by name) and the corpus replays.
TESTS='^(Safetensors|Checkpoint|Idx|FashionMNIST|Datasets|DataLoader|Samplers|Transforms|Hostile[A-Za-z]*)\.|^fuzz_'

start=$SECONDS
source "$ROOT/scripts/common.sh"
ember_check_ccache cpu-asan
ember_configure_fuzz_tree "$ROOT" "$build_dir"
cmake --build "$build_dir" --parallel "${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
  --target "${TARGETS[@]}"
echo "[cpu-asan] build: $((SECONDS - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
start=$SECONDS
(cd "$build_dir" && ctest --output-on-failure --no-tests=error -L cpu -R "$TESTS" -j2 --timeout 300)
echo "[cpu-asan] tests: $((SECONDS - start)) s"
