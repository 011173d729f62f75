#!/usr/bin/env bash
# Sets up a machine, checks the style of every source (scripts/lint.sh --all: formatting, line
# length, file size, CUDA rules, layer order), builds ember in Release, checks the Dockerfile
# (scripts/check-dockerfile.sh: hadolint, the runtime stage's packages) and runs the tests: the CPU
# suite, the SIMT emulator suite (when the CUDA headers are present), the real-GPU suite (each test
# skipped without a GPU), the packaging check (find_package and add_subdirectory from a small
# consumer project), then two checks that need no GPU: the sm_90 register/spill report of the CUDA
# kernels (when nvcc is present; scripts/kernel-resources.sh), the emulated-CUDA subset under
# ASan and UBSan (scripts/test-sim-asan.sh --quick, in build-sim-asan/), 90 s of fuzzing of the
# file loaders with libFuzzer under ASan and UBSan (scripts/fuzz.sh, clang, in build-fuzz/), the
# CPU tests that read files under ASan and UBSan in that tree (scripts/test-cpu-asan.sh) and the
# thread-pool and DataLoader tests under ThreadSanitizer (scripts/test-tsan.sh, in build-tsan/).
# The sanitized subsets are skipped with --sanitize, which already runs everything sanitized.
#
#   scripts/test.sh [--sanitize] [--build-dir DIR]
#
# Exits non-zero when anything fails. EMBER_SKIP_DEPS=1 skips the package installation step.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
die() { echo "[test] error: $*" >&2; exit 1; }

build_args=(--release)
build_dir=""
while (($#)); do
  case "$1" in
    --sanitize) build_args+=(--sanitize) ;;
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
if [[ -z "$build_dir" ]]; then
  build_dir=$ROOT/build
  [[ " ${build_args[*]} " == *" --sanitize "* ]] && build_dir+=-asan
fi
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir

"$ROOT/scripts/install-deps.sh"
# A style failure fails the run, after the tests have run too.
status=0
echo "[test] scripts/lint.sh --all"
"$ROOT/scripts/lint.sh" --all || { echo "[test] lint: FAILED"; status=1; }
"$ROOT/scripts/build.sh" "${build_args[@]}" --build-dir "$build_dir"
# The Dockerfile: hadolint, and its runtime stage's packages against the built binary.
echo "[test] scripts/check-dockerfile.sh"
"$ROOT/scripts/check-dockerfile.sh" "$build_dir/tools/ember/ember" ||
  { echo "[test] dockerfile: FAILED"; status=1; }

# Runs ctest for one label, keeps its log, prints its summary line; returns ctest's status.
run_label() {
  local label=$1 log=$build_dir/ctest-$1.log rc=0
  shift
  echo "[test] ctest -L $label"
  (cd "$build_dir" && ctest --output-on-failure --no-tests=error -L "$label" "$@") 2>&1 |
    tee "$log" || rc=$?
  local summary
  summary=$(grep -E 'tests passed|No tests were found' "$log" | tail -n 1 || true)
  echo "[test] $label: ${summary:-no summary from ctest (see $log)}"
  return "$rc"
}

# A hung test must not hold the run for long: each one gets a default time limit.
run_label cpu -j2 --timeout 600 || status=1
# The SIMT emulator's suite (emulated CUDA kernels); built whenever the CUDA headers are present.
if [[ -f $build_dir/simt/libember_simt.a ]]; then
  run_label sim -j2 --timeout 600 || status=1
fi
# Real-GPU tests: each one is skipped, with the reason, where there is no GPU.
run_label cuda -j2 --timeout 900 || status=1
run_label package || status=1

# Registers, shared memory and spills of every kernel for sm_90, from ptxas (no GPU needed); a
# spilling kernel on the hot list fails. Only where the build compiles CUDA with nvcc.
if grep -q 'nvcc' "$build_dir/build.ninja" 2>/dev/null; then
  echo "[test] kernel resources (sm_90)"
  report=$build_dir/kernel-resources.txt
  if "$ROOT/scripts/kernel-resources.sh" --build-dir "$build_dir" >"$report"; then
    tail -n 1 "$report"
  else
    tail -n 20 "$report"
    echo "[test] kernel resources: FAILED (report in $report)"
    status=1
  fi
fi
# The emulated CUDA kernels under AddressSanitizer: an out-of-bounds access in a kernel fails.
if [[ -f $build_dir/simt/libember_simt.a && " ${build_args[*]} " != *" --sanitize "* ]]; then
  echo "[test] emulated CUDA under ASan (subset)"
  EMBER_SKIP_DEPS=1 "$ROOT/scripts/test-sim-asan.sh" --quick || status=1
fi
# The thread pool and the DataLoader under ThreadSanitizer: a data race fails.
if [[ " ${build_args[*]} " != *" --sanitize "* ]]; then
  echo "[test] thread pool and DataLoader under TSan"
  tsan_start=$SECONDS
  EMBER_SKIP_DEPS=1 "$ROOT/scripts/test-tsan.sh" || status=1
  echo "[test] TSan: $((SECONDS - tsan_start)) s"
fi
# The file loaders under libFuzzer (ASan + UBSan), 90 s of fuzzing in all, then the CPU tests
# that parse files under ASan and UBSan in the same clang tree (build-fuzz/).
echo "[test] fuzzing the file loaders (90 s)"
EMBER_SKIP_DEPS=1 "$ROOT/scripts/fuzz.sh" --seconds 90 || status=1
if [[ " ${build_args[*]} " != *" --sanitize "* ]]; then
  echo "[test] file-reading CPU tests under ASan"
  EMBER_SKIP_DEPS=1 "$ROOT/scripts/test-cpu-asan.sh" || status=1
fi

if ((status != 0)); then
  echo "[test] FAILED"
  exit 1
fi
echo "[test] all tests passed"
