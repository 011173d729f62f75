#!/usr/bin/env bash
# Fuzzes the file loaders (safetensors, training checkpoints, IDX) with libFuzzer under
# AddressSanitizer and UndefinedBehaviorSanitizer for a bounded time. Builds ember with clang
# (EMBER_FUZZ=ON) in build-fuzz/, writes the seed corpus with ember itself (make_fuzz_corpus),
# then runs each target for its share of the time, starting from the seeds and the regression
# corpus. A crash, a sanitizer report, an exception other than ember::Error, an error that does not
# name the file, a hang (-timeout) or a blow-up of memory (-rss_limit_mb) fails the run; the input
# is kept under build-fuzz/findings/ (replay it with fuzz_<target> FILE, then add it to
# tests/fuzz/make_corpus.cpp's regressions).
#
#   scripts/fuzz.sh [--build-dir DIR] [--seconds N]
#
# --seconds is the total fuzzing time, split evenly between the three targets (default 90).
# EMBER_SKIP_DEPS=1 skips the package installation step. EMBER_JOBS sets the parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[fuzz] error: $*" >&2; exit 1; }

build_dir=$ROOT/build-fuzz
seconds=90
while (($#)); do
  case "$1" in
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    --seconds) (($# >= 2)) || die "--seconds needs a number"; seconds=$2; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir
[[ "$seconds" =~ ^[0-9]+$ ]] && ((seconds >= 3)) || die "--seconds must be a number >= 3"

"$ROOT/scripts/install-deps.sh"
command -v clang++ >/dev/null 2>&1 || die "clang++ not found (scripts/install-deps.sh installs it)"

targets=(safetensors checkpoint idx)
start=$SECONDS
source "$ROOT/scripts/common.sh"
ember_check_ccache fuzz
ember_configure_fuzz_tree "$ROOT" "$build_dir"
cmake --build "$build_dir" --parallel "${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}" \
  --target make_fuzz_corpus "${targets[@]/#/fuzz_}"
echo "[fuzz] build: $((SECONDS - start)) s"

corpus=$build_dir/fuzz-corpus
rm -rf "$corpus"
"$build_dir/tests/fuzz/make_fuzz_corpus" "$corpus"
findings=$build_dir/findings
mkdir -p "$findings"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TMPDIR=${TMPDIR:-/tmp}
per_target=$((seconds / ${#targets[@]}))
status=0
for t in "${targets[@]}"; do
  work=$build_dir/fuzz-work/$t
  rm -rf "$work"
  mkdir -p "$work"
  log=$build_dir/fuzz-$t.log
  echo "[fuzz] $t: ${per_target} s"
  # The first directory collects new inputs; the seeds and regressions only start the run.
  if "$build_dir/tests/fuzz/fuzz_$t" -max_total_time="$per_target" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$findings/$t-" "$work" "$corpus/seeds/$t" "$corpus/regressions/$t" \
    >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::new_units_added' "$log" |
      sed "s/^/[fuzz] $t: /" || true
  else
    tail -n 40 "$log"
    echo "[fuzz] $t: FAILED (log $log, input under $findings/)"
    status=1
  fi
done
echo "[fuzz] total: $((SECONDS - start)) s"
exit "$status"
