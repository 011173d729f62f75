#!/usr/bin/env bash
# ember vs libtorch on the CPU: installs libtorch-dev when missing, builds ember (Release) and the
# two programs of bench/compare/, runs every workload for each thread count, alternating the two
# programs (A B, then B A, ...) round after round, and prints a Markdown table of the medians.
#
#   bench/compare/run.sh [--rounds N] [--threads "1 2"] [--workloads a,b,...] [--min-time S]
#                        [--quick] [--omp-passive] [--no-build] [--build-dir DIR] [--out FILE]
#                        [--report-only] [--build-only]
#
#   --rounds N       timed rounds per workload and thread count (default 5)
#   --threads LIST   thread counts (default "1 2")
#   --workloads W    comma-separated subset of: add_small add_small_grad add_large memcpy
#                    sgemm512 sgemm1024 sgemm2048 fma_peak mlp cnn transformer (default: all)
#   --min-time S     seconds of timed repetitions per run, at least (default 1)
#   --quick          2 rounds, --min-time 0.3: a check that everything runs (a few minutes)
#   --omp-passive    run libtorch with OMP_WAIT_POLICY=PASSIVE: its OpenMP workers sleep instead
#                    of spinning between parallel regions (matters on a loaded machine)
#   --no-build       use the programs already built
#   --build-dir DIR  the build tree (default build-compare/ in the repository)
#   --out FILE       keep the raw results, one JSON line per run (default DIR/results.jsonl)
#   --report-only    no build and no runs: print the table of the results already in FILE
#   --build-only     build (and install what is missing), no runs, no report (train.sh uses it)
#
# Leaves OPENBLAS_CORETYPE as the environment sets it, and reports the OpenBLAS core in use.
# "ember vs libtorch" is stated so that > 1 means ember is better (faster, or smaller).
# EMBER_SKIP_DEPS=1 skips the package installation; EMBER_JOBS=N sets the build's parallel jobs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
die() { echo "[compare] error: $*" >&2; exit 1; }
log() { echo "[compare] $*" >&2; }

ALL_WORKLOADS=(add_small add_small_grad add_large memcpy sgemm512 sgemm1024 sgemm2048 fma_peak
  mlp cnn transformer)
rounds=5
threads_list="1 2"
workloads=("${ALL_WORKLOADS[@]}")
min_time=1
build=1
runs=1
report=1
omp_policy=default
build_dir=$ROOT/build-compare
out=""
while (($#)); do
  case "$1" in
    --rounds) rounds=${2:?}; shift ;;
    --threads) threads_list=${2:?}; shift ;;
    --workloads) IFS=, read -r -a workloads <<<"${2:?}"; shift ;;
    --min-time) min_time=${2:?}; shift ;;
    --quick) rounds=2; min_time=0.3 ;;
    --omp-passive) omp_policy=PASSIVE ;;
    --no-build) build=0 ;;
    --report-only) build=0; runs=0 ;;
    --build-only) runs=0; report=0 ;;
    --build-dir) build_dir=${2:?}; shift ;;
    --out) out=${2:?}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir
out=${out:-$build_dir/results.jsonl}
for w in "${workloads[@]}"; do
  [[ " ${ALL_WORKLOADS[*]} " == *" $w "* ]] || die "unknown workload '$w'"
done

# ---- set up and build ----------------------------------------------------------------------------

if ((build)); then
  "$ROOT/scripts/install-deps.sh" libtorch-dev >&2
  source "$ROOT/scripts/common.sh"
  ember_check_ccache compare
  jobs=${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}
  gen=()
  if [[ ! -f "$build_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
  fi
  cmake -S "$ROOT/bench/compare" -B "$build_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >&2
  log "build ember (Release) and both programs with $jobs jobs"
  cmake --build "$build_dir" --parallel "$jobs" --target ember_work torch_work ember_cli torch_train >&2
fi
((report || runs)) || exit 0
EMBER_BIN=$build_dir/ember_work
TORCH_BIN=$build_dir/torch_work
[[ -x $EMBER_BIN && -x $TORCH_BIN ]] || die "programs not built in $build_dir"

# ---- runs ----------------------------------------------------------------------------------------

# Fewer repetitions where one repetition is long.
extra_args() {
  case "$1" in
    transformer) echo "--min-reps 3 --warmup 1 --min-time 0" ;;
    cnn | sgemm2048) echo "--min-reps 3 --warmup 1 --min-time $min_time" ;;
    *) echo "--min-time $min_time" ;;
  esac
}

run_one() {  # PROGRAM WORKLOAD THREADS: appends the program's JSON line to $out
  local line
  local env=()
  [[ $1 == "$TORCH_BIN" && $omp_policy == PASSIVE ]] && env=(OMP_WAIT_POLICY=PASSIVE)
  # shellcheck disable=SC2046
  if ! line=$(env "${env[@]}" "$1" "$2" "$3" $(extra_args "$2")); then
    log "$(basename "$1") $2 $3 failed"
    return 0
  fi
  echo "$line" >>"$out"
}

if ((runs)); then
  mkdir -p "$(dirname "$out")"
  : >"$out"
  load_before=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$SECONDS
  log "warm-up: both programs once (libraries into the page cache)"
  "$EMBER_BIN" info 1 >/dev/null
  "$TORCH_BIN" info 1 >/dev/null
  for ((r = 1; r <= rounds; ++r)); do
    log "round $r/$rounds (load average $(cut -d' ' -f1 /proc/loadavg))"
    for t in $threads_list; do
      for w in "${workloads[@]}"; do
        if ((r % 2)); then
          run_one "$EMBER_BIN" "$w" "$t"
          run_one "$TORCH_BIN" "$w" "$t"
        else
          run_one "$TORCH_BIN" "$w" "$t"
          run_one "$EMBER_BIN" "$w" "$t"
        fi
      done
    done
  done
  load_after=$(cut -d' ' -f1-3 /proc/loadavg)
  elapsed=$((SECONDS - start))
  # What the report needs besides the runs, so that --report-only can print it again.
  printf '{"framework":"meta","load_before":"%s","load_after":"%s","rounds":%d,"elapsed_s":%d,"threads":"%s","workloads":"%s","omp_policy":"%s"}\n' \
    "$load_before" "$load_after" "$rounds" "$elapsed" "$threads_list" \
    "$(IFS=,; echo "${workloads[*]}")" "$omp_policy" >>"$out"
else
  [[ -f $out ]] || die "no results in $out"
  meta=$(grep -F '"framework":"meta"' "$out" | tail -n 1)
  [[ -n $meta ]] || die "$out has no meta line (an interrupted run?)"
  load_before=$(sed -n 's/.*"load_before":"\([^"]*\)".*/\1/p' <<<"$meta")
  load_after=$(sed -n 's/.*"load_after":"\([^"]*\)".*/\1/p' <<<"$meta")
  rounds=$(sed -n 's/.*"rounds":\([0-9]*\).*/\1/p' <<<"$meta")
  elapsed=$(sed -n 's/.*"elapsed_s":\([0-9]*\).*/\1/p' <<<"$meta")
  threads_list=$(sed -n 's/.*"threads":"\([^"]*\)".*/\1/p' <<<"$meta")
  IFS=, read -r -a workloads <<<"$(sed -n 's/.*"workloads":"\([^"]*\)".*/\1/p' <<<"$meta")"
  omp_policy=$(sed -n 's/.*"omp_policy":"\([^"]*\)".*/\1/p' <<<"$meta")
  omp_policy=${omp_policy:-default}
fi

# ---- the report ----------------------------------------------------------------------------------

field() {  # JSON-LINE KEY: the value of one field of a flat JSON line
  sed -n "s/.*\"$2\":\"\\{0,1\\}\\([^,\"}]*\\).*/\\1/p" <<<"$1"
}

median() {  # of the numbers on stdin; "nan" when there are none
  sort -g | awk '{ a[NR] = $1 } END {
    if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

values() {  # FRAMEWORK WORKLOAD THREADS KEY: every run's value, one a line (none: no line)
  { grep -F "\"framework\":\"$1\",\"workload\":\"$2\",\"threads\":$3," "$out" || true; } |
    sed -n "s/.*\"$4\":\\([^,}]*\\).*/\\1/p"
}

med() { values "$@" | median; }

fmt() {  # a number with 3 significant digits (or as is when it is not one)
  awk -v x="$1" 'BEGIN { if (x == "nan" || x == "") print "–"; else if (x + 0 >= 100) printf "%.0f\n", x; else printf "%.3g\n", x }'
}

# ROW: label threads metric ember libtorch better(higher|lower) target-text target-min
# The ratio is ember/libtorch for "higher", libtorch/ember for "lower"; met when >= target-min.
row() {
  local label=$1 t=$2 metric=$3 e=$4 l=$5 better=$6 target=$7 min=${8:-}
  local ratio status
  ratio=$(awk -v e="$e" -v l="$l" -v b="$better" 'BEGIN {
    if (e == "nan" || l == "nan" || e + 0 == 0 || l + 0 == 0) { print "nan"; exit }
    printf "%.2f\n", (b == "higher") ? e / l : l / e }')
  status=""
  if [[ -n $min && $ratio != nan ]]; then
    status=$(awk -v r="$ratio" -v m="$min" 'BEGIN { print (r >= m) ? "met" : sprintf("not met (%.2fx short)", m / r) }')
  fi
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$t" "$metric" "$(fmt "$e")" \
    "$(fmt "$l")" "$([[ $ratio == nan ]] && echo – || echo "${ratio}x")" "$target" "$status"
}

# ROW2: label threads metric value reference target-text min: ember against a reference.
row_ref() {
  local label=$1 t=$2 metric=$3 v=$4 ref=$5 target=$6 min=$7
  local frac status
  frac=$(awk -v v="$v" -v r="$ref" 'BEGIN { if (v == "nan" || r == "nan" || r + 0 == 0) print "nan"; else printf "%.2f\n", v / r }')
  status=$(awk -v f="$frac" -v m="$min" 'BEGIN { if (f == "nan") print ""; else print (f >= m) ? "met" : sprintf("not met (%.0f%% short)", 100 * (m - f) / m) }')
  printf '| %s | %s | %s | %s | – | %s | %s | %s |\n' "$label" "$t" "$metric" "$(fmt "$v")" \
    "$([[ $frac == nan ]] && echo – || echo "${frac}x the reference")" "$target" "$status"
}

has() { [[ " ${workloads[*]} " == *" $1 "* ]]; }

einfo=$("$EMBER_BIN" info 1)
tinfo=$("$TORCH_BIN" info 1)
dnnl_isa=$(DNNL_VERBOSE=1 "$TORCH_BIN" cnn 1 --min-reps 1 --warmup 0 --min-time 0 2>/dev/null |
  sed -n 's/^onednn_verbose,info,cpu,isa://p' | head -n 1)
lib_ember=$(find "$build_dir/ember" -maxdepth 1 -name 'libember.*' -type f | head -n 1)
# The libraries torch_work really loads.
mapfile -t torch_libs < <(ldd "$TORCH_BIN" | awk '$1 ~ /^lib(torch_cpu|c10)\.so/ { print $3 }')
size_mib() { stat -L -c %s "$@" | awk '{ s += $1 } END { printf "%.1f\n", s / 1048576 }'; }

echo
echo "### ember vs libtorch on the CPU ($(date -u +%Y-%m-%dT%H:%MZ))"
echo
echo "- machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1), $(uname -r)"
echo "- load average (1/5/15 min): $load_before before, $load_after after; $rounds rounds in ${elapsed} s"
echo "- ember $(field "$einfo" version) (CPU backend, Release, $(basename "$lib_ember") $(size_mib "$lib_ember") MiB);" \
  "libtorch $(field "$tinfo" version) (Debian libtorch-dev $(dpkg-query -W -f='${Version}' libtorch-dev 2>/dev/null || echo '?'); libtorch_cpu.so + libc10.so" \
  "$(size_mib "${torch_libs[@]}") MiB)"
onednn=$(field "$einfo" onednn)
if [[ $onednn == oneDNN* ]]; then
  echo "- ember's float32 products: ${onednn%% (*} where it is faster for the shape, else OpenBLAS"
else
  echo "- ember's float32 products: OpenBLAS only (oneDNN ${onednn#off: })"
fi
echo "- OpenBLAS: $(field "$einfo" openblas_config); core $(field "$einfo" openblas_core)" \
  "(OPENBLAS_CORETYPE=$(field "$einfo" openblas_coretype_env)); libtorch sees core $(field "$tinfo" openblas_core)"
echo "- libtorch: ATen CPU capability$(field "$tinfo" cpu_capability), oneDNN$(field "$tinfo" mkldnn) ISA: ${dnnl_isa:-not reported}," \
  "OpenMP threads (OMP_WAIT_POLICY $omp_policy); intra-op threads = OpenBLAS threads = the run's count, 1 inter-op thread"
echo "- figures: median over the rounds of each run's median repetition; 'cpu util' in the raw" \
  "results ($out) shows how many cores each run really had"
echo
echo "| workload | threads | metric | ember | libtorch | ember vs libtorch (>1: ember better) | target | status |"
echo "| --- | ---: | --- | ---: | ---: | ---: | --- | --- |"
for t in $threads_list; do
  peak_e=$(med ember fma_peak "$t" gflops)
  peak_l=$(med libtorch fma_peak "$t" gflops)
  peak=$( (echo "$peak_e"; echo "$peak_l") | { grep -v nan || true; } | median)
  copy=$( (values ember memcpy "$t" gbps; values libtorch memcpy "$t" gbps) | median)
  if has add_small; then
    row "add, 8 elements" "$t" "ns/op" "$(med ember add_small "$t" ns_per_op)" \
      "$(med libtorch add_small "$t" ns_per_op)" lower ">= 3x" 3
  fi
  if has add_small_grad; then
    row "add, 8 elements, requires_grad" "$t" "ns/op" "$(med ember add_small_grad "$t" ns_per_op)" \
      "$(med libtorch add_small_grad "$t" ns_per_op)" lower ">= 2x" 2
  fi
  if has add_large; then
    e=$(med ember add_large "$t" gbps)
    row "add, 16M elements, into an existing output (*)" "$t" "GB/s" "$e" \
      "$(med libtorch add_large "$t" gbps)" higher "" ""
    has memcpy && row_ref "add, 16M: ember vs memcpy" "$t" "GB/s" "$e" "$copy" ">= 0.9 of memcpy" 0.9
  fi
  if has memcpy; then
    row "memcpy 64 MiB (reference)" "$t" "GB/s" "$(med ember memcpy "$t" gbps)" \
      "$(med libtorch memcpy "$t" gbps)" higher "" ""
  fi
  for n in 512 1024 2048; do
    has "sgemm$n" || continue
    e=$(med ember "sgemm$n" "$t" gflops)
    row "sgemm $n" "$t" "GFLOP/s" "$e" "$(med libtorch "sgemm$n" "$t" gflops)" higher ">= 1x" 1
    has fma_peak && row_ref "sgemm $n: ember vs FMA peak" "$t" "GFLOP/s" "$e" "$peak" ">= 0.85 of peak" 0.85
  done
  if has fma_peak; then
    row "FMA peak, AVX-512 (reference)" "$t" "GFLOP/s" "$peak_e" "$peak_l" higher "" ""
  fi
  if has mlp; then
    row "MLP 784-512-512-10, batch 128" "$t" "samples/s" "$(med ember mlp "$t" samples_per_s)" \
      "$(med libtorch mlp "$t" samples_per_s)" higher ">= 1.3x" 1.3
    row "MLP step" "$t" "ms/step" "$(med ember mlp "$t" ms_per_step)" \
      "$(med libtorch mlp "$t" ms_per_step)" lower "" ""
    if has fma_peak; then
      row "MLP, fraction of FMA peak" "$t" "% of peak" \
        "$(awk -v g="$(med ember mlp "$t" gflops)" -v p="$peak" 'BEGIN { printf "%.1f\n", 100 * g / p }')" \
        "$(awk -v g="$(med libtorch mlp "$t" gflops)" -v p="$peak" 'BEGIN { printf "%.1f\n", 100 * g / p }')" \
        higher "" ""
    fi
  fi
  if has cnn; then
    row "CNN (2 conv, 2 linear), batch 64" "$t" "samples/s" "$(med ember cnn "$t" samples_per_s)" \
      "$(med libtorch cnn "$t" samples_per_s)" higher ">= 2x" 2
    row "CNN step" "$t" "ms/step" "$(med ember cnn "$t" ms_per_step)" \
      "$(med libtorch cnn "$t" ms_per_step)" lower "" ""
  fi
  if has transformer; then
    row "TransformerEncoderLayer(256, 4), (128, 16)" "$t" "samples/s" \
      "$(med ember transformer "$t" samples_per_s)" "$(med libtorch transformer "$t" samples_per_s)" \
      higher ">= 1.3x" 1.3
    row "transformer step" "$t" "ms/step" "$(med ember transformer "$t" ms_per_step)" \
      "$(med libtorch transformer "$t" ms_per_step)" lower "" ""
  fi
  for w in mlp cnn; do
    has $w || continue
    row "peak RSS, $w process" "$t" "MiB" \
      "$(awk -v k="$(med ember $w "$t" maxrss_kib)" 'BEGIN { print k / 1024 }')" \
      "$(awk -v k="$(med libtorch $w "$t" maxrss_kib)" 'BEGIN { print k / 1024 }')" lower ">= 2x" 2
  done
done
row "library size on disk" "–" "MiB" "$(size_mib "$lib_ember")" \
  "$(size_mib "${torch_libs[@]}")" lower "" ""
if [[ " $threads_list " == *" 1 "* ]]; then
  echo
  echo "One thread, by the process's CPU time per repetition: what each framework spends when it" \
    "runs alone on a core, little affected by the other jobs on a shared machine (lower is better)."
  echo
  echo "| workload | threads | metric | ember | libtorch | ember vs libtorch (>1: ember better) | target | status |"
  echo "| --- | ---: | --- | ---: | ---: | ---: | --- | --- |"
  has add_small && row "add, 8 elements" 1 "CPU ns/op" "$(med ember add_small 1 cpu_ns_per_op)" \
    "$(med libtorch add_small 1 cpu_ns_per_op)" lower ">= 3x" 3
  has add_small_grad && row "add, 8 elements, requires_grad" 1 "CPU ns/op" \
    "$(med ember add_small_grad 1 cpu_ns_per_op)" "$(med libtorch add_small_grad 1 cpu_ns_per_op)" \
    lower ">= 2x" 2
  peak1=$( (med ember fma_peak 1 gflops; med libtorch fma_peak 1 gflops) | { grep -v nan || true; } | median)
  for n in 512 1024 2048; do
    has "sgemm$n" || continue
    e=$(med ember "sgemm$n" 1 cpu_ms)
    row "sgemm $n" 1 "CPU ms" "$e" "$(med libtorch "sgemm$n" 1 cpu_ms)" lower ">= 1x" 1
    has fma_peak && row_ref "sgemm $n: ember vs FMA peak" 1 "GFLOP/s of CPU time" \
      "$(awk -v n="$n" -v ms="$e" 'BEGIN { print (ms == "nan") ? "nan" : 2 * n * n * n / (ms * 1e6) }')" \
      "$peak1" ">= 0.85 of peak" 0.85
  done
  has mlp && row "MLP step" 1 "CPU ms/step" "$(med ember mlp 1 cpu_ms_per_step)" \
    "$(med libtorch mlp 1 cpu_ms_per_step)" lower ">= 1.3x" 1.3
  has cnn && row "CNN step" 1 "CPU ms/step" "$(med ember cnn 1 cpu_ms_per_step)" \
    "$(med libtorch cnn 1 cpu_ms_per_step)" lower ">= 2x" 2
  has transformer && row "transformer step" 1 "CPU ms/step" \
    "$(med ember transformer 1 cpu_ms_per_step)" "$(med libtorch transformer 1 cpu_ms_per_step)" \
    lower ">= 1.3x" 1.3
fi
echo
echo "(*) ember has no out= variant of add: ember runs c = a + b, whose output block the caching" \
  "allocator hands back each time (no page is touched for the first time after the warm-up);" \
  "libtorch runs torch::add_out(c, a, b). Both move 3 x 64 MiB per add."
