#!/usr/bin/env bash
# Time to a test accuracy on Fashion-MNIST: `ember train` (its default CNN, SGD with Nesterov
# momentum, one-cycle schedule over 8 epochs, batch 64) against the same model, data pipeline
# and hyper-parameters written in libtorch (torch_train.cpp). Builds both with run.sh's build,
# unpacks Debian's dataset-fashion-mnist for libtorch's IDX reader, runs ember then libtorch
# (alternating when --rounds > 1), each until the first epoch whose test accuracy reaches the
# target, and prints a Markdown table: the epoch, its accuracy and the wall time to it.
#
#   bench/compare/train.sh [--threads N] [--target ACC] [--rounds N] [--no-build]
#                          [--build-dir DIR]
#
#   --threads N   threads for both (default: every core)
#   --target ACC  test accuracy to reach (default 0.91)
#   --rounds N    runs of each program (default 1)
#
# Wall time is counted as each program counts it: from the end of data loading and model set-up
# to the end of the epoch's test evaluation (ember's includes its per-epoch checkpoint). The
# machine should be otherwise idle: a training run takes minutes and other jobs distort it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
log() { echo "[train-compare] $*" >&2; }
die() { echo "[train-compare] error: $*" >&2; exit 1; }

threads=$(nproc 2>/dev/null || echo 2)
target=0.91
rounds=1
build=1
build_dir=$ROOT/build-compare
while (($#)); do
  case "$1" in
    --threads) threads=${2:?}; shift ;;
    --target) target=${2:?}; shift ;;
    --rounds) rounds=${2:?}; shift ;;
    --no-build) build=0 ;;
    --build-dir) build_dir=${2:?}; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir

((build)) && "$ROOT/bench/compare/run.sh" --build-only --build-dir "$build_dir"
EMBER=$build_dir/ember/tools/ember/ember
TORCH=$build_dir/torch_train
[[ -x $EMBER && -x $TORCH ]] || die "programs not built in $build_dir (run without --no-build)"

# libtorch's MNIST reader wants the four IDX files uncompressed under their canonical names.
src=/usr/share/datasets/fashion-mnist
data=$build_dir/fashion-mnist
mkdir -p "$data"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  if [[ ! -s $data/$f ]]; then
    [[ -f $src/$f.gz ]] || die "$src/$f.gz missing: install dataset-fashion-mnist (scripts/install-deps.sh)"
    gunzip -c "$src/$f.gz" >"$data/$f.tmp" && mv "$data/$f.tmp" "$data/$f"
  fi
done

results=$build_dir/train-results.jsonl
: >"$results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# First epoch line of a JSON-lines file whose test_accuracy reaches the target, or nothing.
reached() {
  awk -v t="$target" 'match($0, /"test_accuracy":[0-9.eE+-]+/) {
    a = substr($0, RSTART + 16, RLENGTH - 16) + 0; if (a >= t) { print; exit } }' "$1" 2>/dev/null || true
}

run_ember() {  # ROUND: `ember train`, stopped once metrics.jsonl shows the target
  local dir=$work/ember-$1 pid line
  "$EMBER" train --threads "$threads" --checkpoint-dir "$dir" >"$work/ember-$1.log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    line=$(reached "$dir/metrics.jsonl")
    if [[ -n $line ]]; then
      kill "$pid" 2>/dev/null || true
      break
    fi
    sleep 1
  done
  wait "$pid" 2>/dev/null || true
  line=$(reached "$dir/metrics.jsonl")
  [[ -n $line ]] || line=$(tail -n 1 "$dir/metrics.jsonl" 2>/dev/null || true)
  [[ -n $line ]] || { tail -n 5 "$work/ember-$1.log" >&2; die "ember train produced no metrics"; }
  echo "{\"framework\":\"ember\",${line#\{}" >>"$results"
}

run_torch() {  # ROUND
  local line
  line=$("$TORCH" "$data" "$threads" --target "$target" | tail -n 1)
  echo "$line" >>"$results"
}

log "target test accuracy $target, $threads threads, $rounds round(s); load average $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  if ((r % 2)); then
    log "round $r: ember train"; run_ember "$r"
    log "round $r: libtorch"; run_torch "$r"
  else
    log "round $r: libtorch"; run_torch "$r"
    log "round $r: ember train"; run_ember "$r"
  fi
done

field() { sed -n "s/.*\"$2\":\\([^,}]*\\).*/\\1/p" <<<"$1"; }
echo
echo "### Fashion-MNIST CNN to ${target} test accuracy ($(date -u +%Y-%m-%dT%H:%MZ), $threads threads, load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "| framework | round | epoch reached | test accuracy | wall time to it (s) |"
echo "| --- | ---: | ---: | ---: | ---: |"
declare -A n=()
while IFS= read -r line; do
  fw=$(sed -n 's/.*"framework":"\([^"]*\)".*/\1/p' <<<"$line")
  n[$fw]=$((${n[$fw]:-0} + 1))
  printf '| %s | %d | %s | %.2f%% | %.1f |\n' "$fw" "${n[$fw]}" "$(field "$line" epoch)" \
    "$(awk -v a="$(field "$line" test_accuracy)" 'BEGIN { print 100 * a }')" "$(field "$line" elapsed_s)"
done <"$results"
