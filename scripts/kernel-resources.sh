#!/usr/bin/env bash
# Prints what every CUDA kernel of ember costs on sm_90 — registers, static shared memory, stack
# frame (local memory) and spill stores/loads, as ptxas reports them — and fails when a kernel
# on the hot list (element-wise, copies, reductions, scans, softmax, the fused norm, optimizer
# and cross-entropy kernels) spills more than scripts/kernel-resources.allow allows it. Needs no
# GPU: each .cu of a configured CUDA build is compiled once more, device code only, for sm_90
# with `nvcc --resource-usage`.
#
#   scripts/kernel-resources.sh [--build-dir DIR] [--all] [--update-allow]
#
# DIR is a tree configured with the CUDA backend (default build/; configure it with
# scripts/build.sh first; nothing needs to be built). Kernels are listed by source file, most
# registers first; --all also lists device functions ptxas reports on their own. --update-allow
# rewrites scripts/kernel-resources.allow with the hot kernels that spill now (a reviewed
# decision: the diff shows what was accepted). EMBER_JOBS sets the parallel compiles (default:
# nproc).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
die() { echo "[kernel-resources] error: $*" >&2; exit 1; }

# Kernels that must not spill: the memory-bound families every model runs. Matched against the
# bare kernel name (demangled, without namespaces, template arguments or parameters). The hot
# kernels that spilled when this check was introduced are listed, with their spill bytes, in
# scripts/kernel-resources.allow: they pass while they spill no more than listed.
HOT='^(contiguous|strided|transpose_copy'                                  # element-wise, copies
HOT+='|reduce_inner|reduce_outer|reduce_finalize|column_reduce|channel_reduce' # reductions
HOT+='|scan_rows|scan_columns|softmax_rows|softmax_columns'                    # scans, softmax
HOT+='|row_stats|row_forward|row_backward|channel_forward|channel_backward'    # norms
HOT+='|optim|cross_entropy|cross_entropy_backward|nll)_kernel$'               # optimizers, losses

build_dir=$ROOT/build
all=0
update_allow=0
while (($#)); do
  case "$1" in
    --build-dir) (($# >= 2)) || die "--build-dir needs a directory"; build_dir=$2; shift ;;
    --all) all=1 ;;
    --update-allow) update_allow=1 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir
[[ -f $build_dir/build.ninja ]] || die "$build_dir is not a Ninja build tree (run scripts/build.sh)"
command -v ninja >/dev/null 2>&1 || die "ninja not found"
command -v c++filt >/dev/null 2>&1 || die "c++filt (binutils) not found"

# The nvcc command of every CUDA object, as the build runs it.
mapfile -t objects < <(ninja -C "$build_dir" -t targets all 2>/dev/null |
  sed -n 's|^\(CMakeFiles/ember_cuda_objects\.dir/.*\.cu\.o\): .*|\1|p' | sort -u)
((${#objects[@]} > 0)) || die "$build_dir has no CUDA objects: configure it with the CUDA backend (nvcc)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs=${EMBER_JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$SECONDS

# One script per object: the build's own command with its architectures replaced by sm_90, the
# host compile dropped (-cubin) and ptxas's report turned on.
i=0
for obj in "${objects[@]}"; do
  cmd=$(ninja -C "$build_dir" -t commands -s "$obj" | tail -n 1)
  [[ $cmd == *nvcc* ]] || continue
  src=${obj#CMakeFiles/ember_cuda_objects.dir/}
  src=${src%.o}
  cmd=$(sed -E -e 's/ --generate-code=[^ ]+//g; s/ -gencode[= ][^ ]+//g; s/ -arch[= ][^ ]+//g' \
    -e 's/ -o [^ ]+//; s/ -c / /; s/ -MD -MT [^ ]+ -MF [^ ]+//; s/ -MD//' <<<"$cmd")
  ((i += 1))
  printf '%s\n' "cd '$build_dir' && $cmd -gencode=arch=compute_90,code=sm_90 -cubin --resource-usage -o '$work/$i.cubin' > '$work/$i.log' 2>&1 || { echo 'FAILED: $src' >> '$work/$i.log'; exit 1; }; echo '$src' > '$work/$i.src'" \
    >"$work/$i.sh"
done
((i > 0)) || die "no nvcc commands found in $build_dir"
echo "[kernel-resources] compiling $i CUDA sources for sm_90 with $jobs jobs"
if ! ls "$work"/*.sh | xargs -P "$jobs" -n 1 bash; then
  cat "$work"/*.log | grep -v '^ptxas info' | head -n 40 >&2
  die "nvcc failed"
fi

# ptxas's report, per function:
#   ptxas info    : Compiling entry function '_Z...' for 'sm_90'
#   ptxas info    : Function properties for _Z...
#       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
#   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]
# (a device function reports "Function properties" and "Used" lines without an entry line).
for ((j = 1; j <= i; ++j)); do
  awk -v src="$(cat "$work/$j.src")" -v all="$all" '
    /Compiling entry function/ { match($0, /function \x27[^\x27]+\x27/); entry = substr($0, RSTART + 10, RLENGTH - 11); next }
    /Function properties for/ { fn = $NF; next }
    /bytes stack frame/ { stack[fn] = $1; st[fn] = $5; ld[fn] = $9; next }
    /Used [0-9]+ registers/ {
      name = fn
      if (entry != "") name = entry
      regs = 0; smem = 0
      for (k = 1; k <= NF; ++k) {
        if ($(k + 1) ~ /^registers/) regs = $k
        if ($(k + 1) ~ /^bytes/ && $(k + 2) ~ /^smem/) smem = $k
      }
      if (entry != "" || all) print src "\t" name "\t" regs "\t" smem "\t" stack[name] + 0 "\t" st[name] + 0 "\t" ld[name] + 0
      entry = ""
    }' "$work/$j.log"
done >"$work/table.tsv"

# Demangle, keep the bare name for the hot-list match, sort by file then registers.
cut -f2 "$work/table.tsv" | c++filt >"$work/names.txt"
paste "$work/table.tsv" "$work/names.txt" |
  awk -F'\t' -v OFS='\t' '{
    full = $8; bare = full
    gsub(/\(anonymous namespace\)::/, "", bare)
    sub(/<.*$/, "", bare); sub(/\(.*$/, "", bare); sub(/^.* /, "", bare); sub(/^.*::/, "", bare)
    src = $1; sub(/^src\/backend\/cuda\//, "", src)
    print src, $3, $4, $5, $6, $7, bare, full
  }' | sort -t$'\t' -k1,1 -k2,2nr -k8,8 >"$work/sorted.tsv"

count=$(wc -l <"$work/sorted.tsv")
((count > 0)) || die "ptxas reported no kernels (see nvcc's output)"
# smem is static shared memory (dynamic shared memory is chosen at launch); stack is the
# per-thread local memory frame, spills included.
printf '%-24s %5s %6s %6s %8s %8s %4s  %s\n' source regs smem stack spill_st spill_ld hot kernel
awk -F'\t' -v hot="$HOT" '{
  name = $8
  if (length(name) > 160) name = substr(name, 1, 157) "..."
  printf "%-24s %5d %6d %6d %8d %8d %4s  %s\n", $1, $2, $3, $4, $5, $6, ($7 ~ hot ? "yes" : ""), name
}' "$work/sorted.tsv"

# Hot kernels that spill more than the allow list says (source, stores, loads, kernel; tabs).
allow=$ROOT/scripts/kernel-resources.allow
if ((update_allow)); then
  {
    echo "# Hot kernels that spilled on sm_90 when accepted (scripts/kernel-resources.sh)."
    echo "# source<TAB>spill store bytes<TAB>spill load bytes<TAB>demangled kernel"
    awk -F'\t' -v OFS='\t' -v hot="$HOT" '($5 > 0 || $6 > 0) && $7 ~ hot { print $1, $5, $6, $8 }' \
      "$work/sorted.tsv"
  } >"$allow"
  echo "[kernel-resources] wrote $allow"
fi
grep -v '^#' "$allow" 2>/dev/null | grep . >"$work/allow.tsv" || true
spilling=$(awk -F'\t' '$5 > 0 || $6 > 0' "$work/sorted.tsv" | wc -l)
hot_count=$(awk -F'\t' -v hot="$HOT" '$7 ~ hot' "$work/sorted.tsv" | wc -l)
hot_spills=$(awk -F'\t' -v hot="$HOT" -v allow="$work/allow.tsv" '
  BEGIN {
    while ((getline line < allow) > 0) {
      split(line, f, "\t")
      allowed[f[1] "\t" f[4]] = f[2] "\t" f[3]
    }
  }
  ($5 > 0 || $6 > 0) && $7 ~ hot {
    key = $1 "\t" $8
    if (key in allowed) { split(allowed[key], a, "\t"); if ($5 <= a[1] && $6 <= a[2]) next }
    print
  }' "$work/sorted.tsv")
echo "[kernel-resources] $count kernels for sm_90 ($hot_count on the hot list), $spilling spilling" \
  "($(wc -l <"$work/allow.tsv") allowed), in $((SECONDS - start)) s"
if ((hot_count == 0)); then
  die "no kernel matched the hot list: update HOT in $0 to the kernels' names"
fi
if [[ -n $hot_spills ]]; then
  echo "[kernel-resources] error: hot kernels spill to local memory (or more than" \
    "scripts/kernel-resources.allow allows):" >&2
  awk -F'\t' '{ printf "  %s: %d bytes spill stores, %d bytes spill loads: %s\n", $1, $5, $6, $8 }' \
    <<<"$hot_spills" >&2
  exit 1
fi
