#!/usr/bin/env bash
# Checks ember on a machine with an NVIDIA GPU in one call of a few minutes: builds it for the
# GPU's architecture, runs `ember doctor`, `ember smi` and `ember bench --quick` (their output
# joins doctor.txt), the `cuda`-labelled tests, the whole op harness on the
# device (every `*/cuda` case and gradcheck, and the convolutions again through im2col), the GPU
# benchmarks next to PyTorch on the same workloads (bench/gpu/workloads.txt), `ember train` next
# to its PyTorch twin (bench/gpu/train_compare.py), and last a time-boxed compute-sanitizer pass
# (memcheck over the op cases, racecheck and synccheck over the kernels that use shared memory).
# Needs nvcc and CMake; no internet, no -dev packages: GoogleTest, OpenBLAS and Fashion-MNIST come
# from .gpu-deps/ (made by scripts/gpu-bundle.sh on a machine that has them).
#
#   scripts/gpu-check.sh [--jobs N] [--out DIR] [--quick] [--budget SECONDS]
#                        [--no-harness] [--no-sanitizer] [--no-bench] [--no-torch] [--no-train]
#                        [--no-gpt2]
#                        [--sanitizer-seconds S]
#                        [--archs "90"] [--build-dir DIR] [--deps DIR] [--hide-system]
#
#   --out DIR      where the results go, at most 8 files (default: $OUT when it is set):
#                  summary.txt (what stdout ends with), results.json, bench.md (the side-by-side
#                  table in docs/perf.md's layout), bench-raw.txt, harness.txt, sanitizer.txt,
#                  train.txt, logs.txt; rewritten after every step, so a run cut short still
#                  leaves what it did
#   --quick        fewer benchmark repetitions, half the sanitizer time, 1 training epoch
#   --budget S     seconds the whole check may take (default 330); a step that no longer fits
#                  is skipped and says so, time-boxed steps shrink to fit
#   --no-harness   skip the op harness on the device
#   --no-sanitizer skip compute-sanitizer
#   --sanitizer-seconds S  memcheck's time box (default 20; racecheck gets 0.7 of it, synccheck
#                  0.4); e.g. 120 with --no-harness --no-bench --no-torch --no-train
#   --no-bench     skip the ember benchmarks; --no-torch skip PyTorch's; --no-train skip training
#   --no-gpt2      skip GPT-2 training steps (bench/gpu/gpt2 next to gpt2_torch.py, eager and
#                  torch.compile, batch 16 x 1024, bf16 autocast)
#   --archs        CUDA architectures (default: the GPU's, from nvidia-smi or torch; else 90)
#   --deps         the bundle (default .gpu-deps/); without one, the system's packages are used
#   --hide-system  find nothing under /usr (check that the bundle alone is enough; for testing
#                  this script on a machine that has the -dev packages)
#
# Logs go to BUILD_DIR/gpu-check/. Exit code: 0 when everything that ran passed (on a machine
# without a GPU: the build and the CPU-side checks; nothing is measured), 1 when something
# failed, 2 usage error.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$ROOT/build-gpu
deps=$ROOT/.gpu-deps
archs=""
jobs=$(nproc 2>/dev/null || echo 2)
out_dir=${OUT:-}
budget=330
quick=0
run_harness=1
run_sanitizer=1
sanitizer_secs=20
run_bench=1
run_torch=1
run_train=1
run_gpt2=1
hide_system=0

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
die() { echo "[gpu-check] error: $*" >&2; publish; exit 1; }
usage_error() { usage >&2; echo "[gpu-check] error: $*" >&2; exit 2; }
say() { echo "[gpu-check] $*"; }

while (($#)); do
  case "$1" in
    --archs) (($# >= 2)) || usage_error "--archs needs a value"; archs=$2; shift ;;
    --build-dir) (($# >= 2)) || usage_error "--build-dir needs a directory"; build_dir=$2; shift ;;
    --deps) (($# >= 2)) || usage_error "--deps needs a directory"; deps=$2; shift ;;
    --jobs) (($# >= 2)) || usage_error "--jobs needs a number"; jobs=$2; shift ;;
    --out) (($# >= 2)) || usage_error "--out needs a directory"; out_dir=$2; shift ;;
    --budget)
      [[ ${2:-} =~ ^[0-9]+$ ]] || usage_error "--budget needs a number of seconds"
      budget=$2
      shift
      ;;
    --quick) quick=1 ;;
    --sanitizer-seconds)
      [[ ${2:-} =~ ^[0-9]+$ ]] || usage_error "--sanitizer-seconds needs a number"
      sanitizer_secs=$2
      shift
      ;;
    --no-harness) run_harness=0 ;;
    --no-sanitizer) run_sanitizer=0 ;;
    --no-bench) run_bench=0 ;;
    --no-torch) run_torch=0 ;;
    --no-train) run_train=0 ;;
    --no-gpt2) run_gpt2=0 ;;
    --hide-system) hide_system=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir
[[ "$deps" = /* ]] || deps=$PWD/$deps
[[ -z "$out_dir" || "$out_dir" = /* ]] || out_dir=$PWD/$out_dir
logs=$build_dir/gpu-check
mkdir -p "$logs" || { echo "[gpu-check] error: cannot create $logs" >&2; exit 1; }
if [[ -n "$out_dir" ]]; then
  mkdir -p "$out_dir" || { echo "[gpu-check] error: cannot create $out_dir" >&2; exit 1; }
fi
# Results of the previous run must not pass for this one's.
rm -f "$logs"/*.txt "$logs"/*.log "$logs"/*.json "$logs"/*.md "$logs"/*.failed "$logs"/*.reports \
  "$logs/steps.tsv"
rm -rf "$logs/train"
if [[ -n "$out_dir" ]]; then
  rm -f "$out_dir"/{summary.txt,results.json,bench.md,bench-raw.txt,harness.txt,sanitizer.txt} \
    "$out_dir"/{train.txt,logs.txt}
fi

# ---- clock, steps and the summary ----------------------------------------------------------------
now() { echo "${EPOCHREALTIME:-$(date +%s.%N)}"; }
t_start=$(now)
elapsed() { awk -v a="$t_start" -v b="$(now)" 'BEGIN { printf "%d", b - a }'; }
left() { echo $((budget - $(elapsed))); }
step_t0=$t_start
begin() { step_t0=$(now); say "$1"; }
failed=0
# record STEP STATUS DETAIL: one row of the summary (status ok, FAIL, warn or skip), timed from
# the last `begin`.
record() {
  local secs
  secs=$(awk -v a="$step_t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$secs" "$3" >>"$logs/steps.tsv"
  [[ $2 == FAIL ]] && failed=1
  step_t0=$(now)
  publish
  return 0
}
# fits STEP SECONDS: true when SECONDS are left in the budget (keeping 10 for the report), else
# records the step as skipped.
fits() {
  if (($(left) - 10 >= $2)); then return 0; fi
  step_t0=$(now)
  record "$1" skip "out of time: $(left) s of the $budget s budget left, needs $2 + 10"
  return 1
}
# box SECONDS: SECONDS, or less when the budget has less left (at least 5).
box() {
  local l=$(($(left) - 10))
  ((l < $1)) && { echo $((l > 5 ? l : 5)); return; }
  echo "$1"
}

summary_text() {
  echo "================ gpu-check summary ================"
  [[ -s $logs/machine.txt ]] && cat "$logs/machine.txt"
  printf '%-30s %-6s %7s  %s\n' step status seconds detail
  [[ -f $logs/steps.tsv ]] &&
    awk -F'\t' '{ printf "%-30s %-6s %7s  %s\n", $1, $2, $3, $4 }' "$logs/steps.tsv"
  printf '%-30s %-6s %7s\n' total "" "$(elapsed)"
  local f
  for f in harness-summary.txt sanitizer-summary.txt bench.txt train.txt train-amp.txt; do
    if [[ -s $logs/$f ]]; then
      echo
      cat "$logs/$f"
    fi
  done
  if [[ -z "$gpu_names" ]]; then
    echo
    echo "no GPU on this machine: the build and the CPU-side checks ran; nothing was measured"
  fi
}

# cat_capped FILE...: the files, each cut to its last 15 MiB (an --out file may hold 16 MiB).
cat_capped() {
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    echo "==== $(basename "$f") ===="
    if (($(stat -c %s "$f") > 15 * 1024 * 1024)); then
      echo "(cut to its last 15 MiB)"
      tail -c $((15 * 1024 * 1024)) "$f"
    else
      cat "$f"
    fi
    echo
  done
}

# Writes the --out files (at most 8) from what the logs hold now.
publish() {
  [[ -n "${out_dir:-}" ]] || return 0
  summary_text >"$out_dir/summary.txt" 2>/dev/null
  cat_capped "$logs"/harness-summary.txt "$logs"/harness*.log >"$out_dir/harness.txt"
  cat_capped "$logs"/sanitizer-summary.txt "$logs"/sanitizer-*.log >"$out_dir/sanitizer.txt"
  cat_capped "$logs"/bench_cuda_*.txt "$logs/bench-torch.txt" "$logs"/gpt2*.txt \
    >"$out_dir/bench-raw.txt"
  cat_capped "$logs/train.txt" "$logs"/train/*.log "$logs/train-amp.txt" "$logs"/train-amp/*.log \
    >"$out_dir/train.txt"
  cat_capped "$logs/machine-full.txt" "$logs/doctor.txt" "$logs/ctest-cuda.log" \
    "$logs/googletest.log" "$logs/configure.log" "$logs/build-tail.log" >"$out_dir/logs.txt"
  if [[ -s $logs/bench.md ]]; then cp "$logs/bench.md" "$out_dir/bench.md"; fi
  if [[ -n "${python:-}" ]]; then
    "$python" - "$logs" "$out_dir/results.json" <<'PY' 2>/dev/null || true
import json, os, sys
logs, out = sys.argv[1], sys.argv[2]
def load(name):
    try:
        with open(os.path.join(logs, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
steps = []
try:
    with open(os.path.join(logs, "steps.tsv")) as f:
        for line in f:
            name, status, secs, detail = (line.rstrip("\n").split("\t") + [""] * 4)[:4]
            steps.append({"step": name, "status": status, "seconds": float(secs or 0),
                          "detail": detail})
except OSError:
    pass
machine = None
try:
    with open(os.path.join(logs, "machine.txt")) as f:
        machine = f.read()
except OSError:
    pass
json.dump({"machine": machine, "steps": steps, "harness": load("harness.json"),
           "benchmarks": load("bench.json"), "training": load("train.json"),
           "training_amp": load("train-amp.json")},
          open(out, "w"), indent=1)
PY
  fi
  return 0
}

# ---- the machine ---------------------------------------------------------------------------------
gpu_names=""
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_names=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader \
    2>/dev/null || true)
fi
python=$(command -v python3 || true)
has_torch_cuda=0
torch_info=""
if [[ -n "$python" ]]; then
  torch_info=$("$python" - <<'PY' 2>/dev/null || true
import torch
ok = torch.cuda.is_available()
name = torch.cuda.get_device_name(0) if ok else "no CUDA device"
cudnn = torch.backends.cudnn.version() if ok else None
print("%d torch %s (CUDA %s, cuDNN %s, %s)"
      % (ok, torch.__version__, torch.version.cuda, cudnn, name))
PY
)
  [[ ${torch_info:0:1} == 1 ]] && has_torch_cuda=1
  torch_info=${torch_info:2}
fi
if [[ -z "$archs" ]]; then
  cap=""
  if [[ -n "$gpu_names" ]]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 |
      tr -d ' .')
  fi
  if [[ -z "$cap" && $has_torch_cuda == 1 ]]; then
    cap=$("$python" -c 'import torch; a, b = torch.cuda.get_device_capability(0); print(f"{a}{b}")')
  fi
  archs=${cap:-90}
fi
nvcc=$(command -v nvcc || true)
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
  [[ -z "$nvcc" && -n "$d" && -x $d/bin/nvcc ]] && nvcc=$d/bin/nvcc
done
sanitizer=$(command -v compute-sanitizer || true)
[[ -z "$sanitizer" && -n "$nvcc" && -x $(dirname "$nvcc")/compute-sanitizer ]] &&
  sanitizer=$(dirname "$nvcc")/compute-sanitizer
{
  echo "machine: $(hostname), $(nproc 2>/dev/null) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ)," \
    "ember $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  if [[ -n "$gpu_names" ]]; then
    while IFS= read -r line; do echo "GPU: $line"; done <<<"$gpu_names"
  else
    echo "GPU: none found (nvidia-smi is missing or lists none)"
  fi
  echo "nvcc: ${nvcc:-not found} $([[ -n "$nvcc" ]] && "$nvcc" --version | grep -o 'release [^,]*')"
  echo "PyTorch: ${torch_info:-not installed}"
  echo "compute-sanitizer: ${sanitizer:-not found}"
} >"$logs/machine.txt"
{
  cat "$logs/machine.txt"
  command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi 2>&1
  [[ -n "$nvcc" ]] && "$nvcc" --version
  cmake --version 2>&1 | head -n 1
} >"$logs/machine-full.txt" 2>&1
cat "$logs/machine.txt"
say "CUDA architectures: $archs; budget $budget s; logs in $logs${out_dir:+; results in $out_dir}"
[[ -n "$nvcc" ]] || die "nvcc not found (put the CUDA toolkit's bin/ in PATH or set CUDA_HOME)"
command -v cmake >/dev/null || die "cmake not found"

# ---- the bundle: unpacked into the build tree (MANIFEST lines from gpu-bundle.sh) ----------------
# The build tree is kept when the check runs again on the same machine, and the bundle may come
# anew: unpacking into the tree keeps GoogleTest's build and the libraries' times, so a rerun
# relinks nothing (and the bundle stays small to copy).
# unxz SRC DEST: xz, or Python's lzma where the machine has no xz.
unxz() {
  if command -v xz >/dev/null 2>&1; then
    xz -dc "$1" >"$2.tmp"
  else
    "$python" -c 'import lzma, shutil, sys
shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$1" "$2.tmp"
  fi && mv "$2.tmp" "$2"
}
if [[ -f $deps/MANIFEST ]]; then
  unpacked=$build_dir/gpu-deps
  # What identifies the bundle: its files, their sizes, its README (date, sources) and MANIFEST.
  bundle_id=$( (cd "$deps" && find . ! -name '*.src' \( -type f -o -type l \) -printf '%P %s\n' |
    sort && cat README MANIFEST) 2>/dev/null)
  if [[ -f $unpacked/BUNDLE && "$(cat "$unpacked/BUNDLE")" == "$bundle_id" ]]; then
    step_t0=$(now)
    record "unpack bundle" ok "already in $unpacked"
  else
    begin "unpacking $deps into $unpacked"
    rm -rf "$unpacked"
    mkdir -p "$unpacked"
    unpack_ok=1
    cp -r "$deps/include" "$unpacked/" || unpack_ok=0
    cp -RP "$deps/lib" "$unpacked/" || unpack_ok=0  # the .xz files are unpacked below
    rm -f "$unpacked"/lib/*.xz "$unpacked"/lib/*.src
    while read -r kind a b; do
      case "$kind" in
        xz)
          mkdir -p "$(dirname "$unpacked/$a")" && unxz "$deps/$a.xz" "$unpacked/$a" || unpack_ok=0
          ;;
        tar)
          mkdir -p "$unpacked/$b"
          if command -v xz >/dev/null 2>&1; then
            tar -C "$unpacked/$b" -xJf "$deps/$a" || unpack_ok=0
          else
            "$python" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
              "$deps/$a" "$unpacked/$b" || unpack_ok=0
          fi
          ;;
        link) ln -sf "$b" "$unpacked/$a" ;;
      esac
    done <"$deps/MANIFEST"
    if ((!unpack_ok)); then
      record "unpack bundle" FAIL "see the messages above"
      die "cannot unpack $deps"
    fi
    # Written last: its presence says the unpacking finished.
    echo "$bundle_id" >"$unpacked/BUNDLE"
    record "unpack bundle" ok "$deps into $unpacked ($(du -sh "$unpacked" | cut -f1))"
  fi
  deps=$unpacked
fi

# ---- dependencies: the bundle (GoogleTest built from source, OpenBLAS) or the system -------------
begin "dependencies"
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON "-DEMBER_CUDA_ARCHS=$archs"
  -DCMAKE_CUDA_COMPILER="$nvcc" -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_BENCH=ON
  -DEMBER_BUILD_TOOLS=ON)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if ((hide_system)); then
  # No package or library from /usr or /: every find_* must use the bundle. The tools themselves
  # (compilers, ninja, ccache, python) are named explicitly since their directories are hidden too.
  cmake_args+=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/"
    "-DCMAKE_C_COMPILER=$(command -v "${CC:-cc}")"
    "-DCMAKE_CXX_COMPILER=$(command -v "${CXX:-c++}")")
  ((${#generator[@]})) && cmake_args+=("-DCMAKE_MAKE_PROGRAM=$(command -v ninja)")
  [[ -n "$python" ]] && cmake_args+=("-DPython3_EXECUTABLE=$python")
  command -v ccache >/dev/null && cmake_args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=$(command -v ccache)"
    "-DCMAKE_C_COMPILER_LAUNCHER=$(command -v ccache)")
fi
if [[ -d $deps ]]; then
  [[ -f $deps/src/googletest/CMakeLists.txt && -e $deps/lib/libopenblas.so ]] ||
    die "$deps is incomplete: run scripts/gpu-bundle.sh on a machine with the -dev packages"
  gtest_prefix=$deps/gtest-install
  if [[ ! -f $gtest_prefix/lib/cmake/GTest/GTestConfig.cmake ]]; then
    say "building GoogleTest from $deps/src/googletest"
    if ! { cmake -S "$deps/src/googletest" -B "$deps/gtest-build" "${generator[@]}" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$gtest_prefix" \
        -DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_POSITION_INDEPENDENT_CODE=ON &&
        cmake --build "$deps/gtest-build" -j "$jobs" && cmake --install "$deps/gtest-build"; } \
        >"$logs/googletest.log" 2>&1; then
      record "googletest" FAIL "see $logs/googletest.log"
      tail -n 30 "$logs/googletest.log"
      die "GoogleTest did not build"
    fi
  fi
  cmake_args+=("-DGTest_DIR=$gtest_prefix/lib/cmake/GTest" "-DCMAKE_PREFIX_PATH=$gtest_prefix;$deps"
    "-DBLAS_openblas_LIBRARY=$deps/lib/libopenblas.so" "-DEMBER_CBLAS_INCLUDE_DIR=$deps/include")
  # zlib: the machine's own where it has the -dev files, else the bundle's headers and copy (for
  # the link: at run time the programs load the machine's libz.so.1).
  if [[ -f $deps/include/zlib.h && ( ! -f /usr/include/zlib.h || $hide_system == 1 ) ]]; then
    cmake_args+=("-DZLIB_INCLUDE_DIR=$deps/include" "-DZLIB_LIBRARY=$deps/lib/zlib/libz.so")
  fi
  [[ -f $deps/include/cudnn/cudnn.h ]] &&
    cmake_args+=("-DEMBER_CUDNN_INCLUDE_DIR=$deps/include/cudnn")
  # The linker and the programs find OpenBLAS's own dependencies (libgfortran) here too.
  export LD_LIBRARY_PATH=$deps/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  record "dependencies" ok "bundle $deps"
else
  ((hide_system)) && die "--hide-system needs the bundle $deps (scripts/gpu-bundle.sh)"
  record "dependencies" ok "system packages"
fi

# ---- cuDNN: PyTorch's copy when the loader finds none (ember also searches the wheels itself) ----
if [[ -z "${EMBER_CUDNN_LIBRARY:-}" && $has_torch_cuda == 1 ]] &&
  ! ldconfig -p 2>/dev/null | grep -q 'libcudnn\.so\.9 '; then
  torch_cudnn=$("$python" - <<'PY' 2>/dev/null || true
import glob, os
dirs = []
try:
    import nvidia.cudnn
    dirs += [os.path.join(p, "lib") for p in nvidia.cudnn.__path__]
except Exception:
    pass
try:
    import torch
    dirs.append(os.path.join(os.path.dirname(torch.__file__), "lib"))
except Exception:
    pass
for d in dirs:
    hits = glob.glob(os.path.join(d, "libcudnn.so.9*"))
    if hits:
        so = os.path.join(d, "libcudnn.so.9")
        print(so if os.path.exists(so) else hits[0])
        break
PY
)
  if [[ -n "$torch_cudnn" ]]; then
    export EMBER_CUDNN_LIBRARY=$torch_cudnn
    say "cuDNN from PyTorch: $torch_cudnn"
  fi
fi

# ---- configure and build -------------------------------------------------------------------------
begin "configuring $build_dir"
if ! cmake -S "$ROOT" -B "$build_dir" "${generator[@]}" "${cmake_args[@]}" \
  >"$logs/configure.log" 2>&1; then
  tail -n 40 "$logs/configure.log"
  record "configure" FAIL "see $logs/configure.log"
  die "configure failed"
fi
if ((hide_system)); then
  # Proof that the bundle was used: where CMake found GoogleTest, OpenBLAS and cblas.h.
  found_re='^(GTest_DIR|BLAS_openblas_LIBRARY|EMBER_CBLAS_INCLUDE_DIR|ZLIB_INCLUDE_DIR'
  found_re+='|ZLIB_LIBRARY_RELEASE|ZLIB_LIBRARY):'
  grep -E "$found_re" "$build_dir/CMakeCache.txt" | sed 's/^/  /'
  if grep -E "$found_re" "$build_dir/CMakeCache.txt" | grep -v NOTFOUND |
    grep -qv "$deps"; then
    record "configure" FAIL "a dependency was found outside $deps"
    die "a dependency was found outside $deps"
  fi
fi
record "configure" ok "archs $archs, $(grep -m1 -o 'CUDA backend on (nvcc [^,]*' \
  "$logs/configure.log" | sed 's/.*(//')"
begin "building (log: $logs/build.log)"
targets=(ember_cli cuda_tests gpu_benchmarks test_harness)
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$logs/build.log" 2>&1; then
  tail -n 200 "$logs/build.log" >"$logs/build-tail.log"
  tail -n 40 "$logs/build.log"
  record "build" FAIL "see $logs/build.log"
  die "build failed"
fi
tail -n 20 "$logs/build.log" >"$logs/build-tail.log"
record "build" ok "${targets[*]}"
ember=$build_dir/tools/ember/ember
harness=$build_dir/tests/test_harness

# ---- ember doctor --------------------------------------------------------------------------------
begin "ember doctor"
"$ember" doctor >"$logs/doctor.txt" 2>&1
doctor_rc=$?
"$ember" doctor --json >"$logs/doctor.json" 2>/dev/null
cat "$logs/doctor.txt"
if [[ -n "$gpu_names" ]]; then
  if ((doctor_rc == 0)); then
    record "ember doctor" ok "CUDA usable"
  else
    record "ember doctor" FAIL "exit $doctor_rc: $(grep -m1 '^error:' "$logs/doctor.txt")"
  fi
elif ((doctor_rc == 1)); then
  record "ember doctor" ok "no GPU: exit 1 as expected"
else
  record "ember doctor" FAIL "exit $doctor_rc without a GPU (expected 1)"
fi

# ---- ember smi and ember bench --quick (their outputs belong in docs/smi.md, docs/bench.md) ------
begin "ember smi, ember bench --quick"
{
  echo "---- ember smi"
  "$ember" smi
  echo "exit $?"
  echo "---- ember smi --csv"
  "$ember" smi --csv
  echo "exit $?"
  echo "---- ember bench --quick"
  timeout "$(box 120)" "$ember" bench --quick --save "$logs/bench-quick.json" 2>/dev/null
  echo "exit $?"
} >"$logs/smi-bench.txt" 2>&1
cat "$logs/smi-bench.txt" >>"$logs/doctor.txt"  # doctor.txt goes to logs.txt in --out
if [[ -n "$gpu_names" ]] && ! grep -q '^exit 0$' "$logs/smi-bench.txt"; then
  record "ember smi, bench" FAIL "see doctor.txt in the logs"
else
  record "ember smi, bench" ok "$(grep -c '^exit 0$' "$logs/smi-bench.txt") of 3 exit 0"
fi

# ---- cuda tests ----------------------------------------------------------------------------------
begin "ctest -L cuda"
(cd "$build_dir" &&
  timeout "$(box 120)" ctest -L cuda --output-on-failure --no-tests=error -j 4 --timeout 120) \
  >"$logs/ctest-cuda.log" 2>&1
ctest_rc=$?
summary=$(grep -E 'tests passed|No tests were found' "$logs/ctest-cuda.log" | tail -n 1)
skipped=$(grep -c '\*\*\*Skipped\|Not Run (Disabled)\| Skipped ' "$logs/ctest-cuda.log" || true)
if ((ctest_rc == 0)); then
  record "cuda tests" ok "$summary; $skipped skipped"
else
  grep -E 'Failed|\*\*\*' "$logs/ctest-cuda.log" | tail -n 20
  record "cuda tests" FAIL "${summary:-ctest exit $ctest_rc} (see ctest-cuda.log)"
fi

# ---- the op harness on the device ----------------------------------------------------------------
# gtest_counts LOG: "passed failed ran" of a googletest log; the failed tests go to LOG.failed.
gtest_counts() {
  local ok bad ran
  ok=$(grep -c '^\[       OK \]' "$1")
  grep -E '^\[  FAILED  \] [^ ]+ \([0-9]+ ms\)' "$1" | awk '{ print $4 }' >"$1.failed"
  bad=$(grep -c '' "$1.failed")
  ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\? from .* ran\..*/\1/p' "$1" | tail -n 1)
  echo "$ok $bad ${ran:--}"
}
# Shared-memory kernels: reductions, softmax, norms, scans, sort/topk, index scans, losses, the
# tiled gemm and transposing copies (racecheck and synccheck run these cases).
SHARED_FILTER='Op.sum/cuda:Op.mean/cuda:Op.am*/cuda:Op.max/cuda:Op.min/cuda:Op.max_dim/cuda'
SHARED_FILTER+=':Op.min_dim/cuda:Op.arg*/cuda:Op.prod/cuda:Op.all/cuda:Op.any/cuda:Op.std*/cuda'
SHARED_FILTER+=':Op.var*/cuda:Op.logsumexp/cuda:Op.*softmax/cuda:Op.*norm*/cuda:Op.cum*/cuda'
SHARED_FILTER+=':Op.nonzero/cuda:Op.masked_select/cuda:Op.sort/cuda:Op.topk/cuda'
SHARED_FILTER+=':Op.cross_entropy*/cuda:Op.nll_loss*/cuda:Op.mm/cuda:Op.bmm/cuda:Op.dot/cuda'
SHARED_FILTER+=':Op.transpose/cuda:Op.contiguous_permute/cuda:Op.sdpa/cuda'
SHARED_FILTER+=':Grad.softmax/cuda:Grad.layer_norm/cuda:Grad.cross_entropy/cuda'
MEMCHECK_FILTER='Op.*/cuda'
device_cases=0
if ((run_harness)); then
  if fits "op harness (cuda)" 20; then
    timeout -k 5 "$(box 90)" "$harness" --gtest_filter='*/cuda:Harness.*' --gtest_color=no \
      >"$logs/harness.log" 2>&1
    harness_rc=$?
    read -r h_ok h_bad h_ran < <(gtest_counts "$logs/harness.log")
    device_cases=$(grep -c '^\[ RUN      \] [^ ]*/cuda$' "$logs/harness.log")
    {
      echo "op harness on the device: $device_cases */cuda cases and gradchecks" \
        "(+ Harness.* self-checks),"
      echo "  $h_ok passed, $h_bad failed of $h_ran (exit $harness_rc)"
      sed 's/^/  FAILED /' "$logs/harness.log.failed"
    } >"$logs/harness-summary.txt"
    if ((device_cases == 0)); then
      record "op harness (cuda)" skip \
        "no CUDA device: 0 device cases ($h_ok Harness.* self-checks passed)"
    elif ((harness_rc == 0 && h_bad == 0)); then
      record "op harness (cuda)" ok "$h_ok/$h_ran passed ($device_cases device cases)"
    else
      record "op harness (cuda)" FAIL \
        "$h_bad of $h_ran failed: $(head -n 5 "$logs/harness.log.failed" | tr '\n' ' ')"
    fi
  fi
  if ((device_cases > 0)) && fits "op harness (im2col)" 10; then
    EMBER_CUDNN=0 timeout -k 5 "$(box 30)" "$harness" \
      --gtest_filter='Op.conv*/cuda:Grad.conv*/cuda' --gtest_color=no \
      >"$logs/harness-im2col.log" 2>&1
    im_rc=$?
    read -r i_ok i_bad i_ran < <(gtest_counts "$logs/harness-im2col.log")
    {
      echo "convolutions through im2col (EMBER_CUDNN=0): $i_ok passed, $i_bad failed of $i_ran"
      sed 's/^/  FAILED /' "$logs/harness-im2col.log.failed"
    } >>"$logs/harness-summary.txt"
    if ((im_rc == 0 && i_bad == 0)); then
      record "op harness (im2col)" ok "$i_ok/$i_ran conv cases with EMBER_CUDNN=0"
    else
      record "op harness (im2col)" FAIL "$i_bad of $i_ran failed"
    fi
  fi
  if [[ -n "${python:-}" && -f $logs/harness.log ]]; then
    "$python" - "$logs" <<'PY' 2>/dev/null || true
import json, os, re, sys
logs = sys.argv[1]
out = {}
for name in ("harness.log", "harness-im2col.log"):
    try:
        text = open(os.path.join(logs, name), errors="replace").read()
    except OSError:
        continue
    out[name] = {
        "passed": re.findall(r"^\[       OK \] (\S+)", text, re.M),
        "failed": re.findall(r"^\[  FAILED  \] (\S+) \(\d+ ms\)", text, re.M)}
json.dump(out, open(os.path.join(logs, "harness.json"), "w"))
PY
  fi
fi

# ---- benchmarks: ember and PyTorch on the same workloads -----------------------------------------
bench_flags=()
((quick)) && bench_flags=(--quick)
if ((run_bench)) && fits "ember benchmarks" 30; then
  shopt -s nullglob
  benches=("$build_dir"/bench/bench_cuda_*)
  shopt -u nullglob
  for b in "${benches[@]}"; do
    [[ -x $b && -f $b && $b != *_sim ]] || continue
    name=$(basename "$b")
    fits "$name" 10 || continue
    begin "running $name"
    timeout "$(box 60)" "$b" "${bench_flags[@]}" >"$logs/$name.txt" 2>&1
    rc=$?
    rows=$(grep -cE '^.{44} +[0-9.]+ +(GB/s|TFLOP/s|us)' "$logs/$name.txt")
    if ((rc == 0)); then
      record "$name" ok "$rows rows$([[ -z "$gpu_names" ]] && echo ' (no GPU: nothing measured)')"
    else
      record "$name" FAIL "exit $rc after $rows rows (see bench-raw.txt)"
    fi
  done
  ((${#benches[@]})) || { step_t0=$(now); record "ember benchmarks" FAIL "no bench_cuda_* built"; }
fi
if ((run_torch)); then
  if [[ $has_torch_cuda != 1 ]]; then
    step_t0=$(now)
    record "torch reference" skip "no PyTorch with CUDA here"
  elif fits "torch reference" 25; then
    begin "running the PyTorch reference"
    timeout "$(box 90)" "$python" "$ROOT/bench/gpu/torch_reference.py" "${bench_flags[@]}" \
      >"$logs/bench-torch.txt" 2>&1
    rc=$?
    rows=$(grep -cE '^.{44} +[0-9.]+ +(GB/s|TFLOP/s|us)' "$logs/bench-torch.txt")
    if ((rc == 0)); then
      record "torch reference" ok "$rows rows, ${torch_info%% (*}"
    else
      record "torch reference" FAIL "exit $rc after $rows rows (see bench-raw.txt)"
    fi
  fi
fi
cat "$logs"/bench_cuda_*.txt >"$logs/bench-ember.txt" 2>/dev/null
if [[ -n "$python" ]] && grep -qE '^.{44} +[0-9.]+ +(GB/s|TFLOP/s|us)' "$logs/bench-ember.txt" \
  "$logs/bench-torch.txt" 2>/dev/null; then
  sbs=$ROOT/bench/gpu/side_by_side.py
  "$python" "$sbs" "$logs/bench-ember.txt" "$logs/bench-torch.txt" --json "$logs/bench.json" \
    >"$logs/bench.txt" 2>&1
  "$python" "$sbs" "$logs/bench-ember.txt" "$logs/bench-torch.txt" --markdown >"$logs/bench.md" 2>&1
  step_t0=$(now)
  record "side by side" ok "$(grep -m1 -E '^[0-9]+ workloads' "$logs/bench.txt")"
fi

# ---- GPT-2: ember next to PyTorch eager and torch.compile, same model, same synthetic batches ----
if ((run_gpt2)); then
  step_t0=$(now)
  if [[ -z "$gpu_names" ]]; then
    record "gpt2" skip "no GPU"
  elif fits "gpt2" 60; then
    begin "GPT-2 small, batch 16 x 1024, bf16 autocast: ember, PyTorch eager, torch.compile"
    timeout "$(box 90)" "$build_dir/bench/gpt2" --amp >"$logs/gpt2.txt" 2>&1
    rc=$?
    line=$(grep -m1 '^ember ' "$logs/gpt2.txt")
    if ((rc == 0)); then record "gpt2 ember" ok "$line"; else record "gpt2 ember" FAIL "exit $rc"; fi
    if ((run_torch)) && [[ $has_torch_cuda == 1 ]]; then
      for mode in eager compile; do
        fits "gpt2 torch $mode" 30 || continue
        flags=(--amp)
        [[ $mode == compile ]] && flags+=(--compile)
        timeout "$(box 120)" "$python" "$ROOT/bench/gpu/gpt2_torch.py" "${flags[@]}" \
          >"$logs/gpt2-torch-$mode.txt" 2>&1
        rc=$?
        line=$(grep -m1 '^torch-' "$logs/gpt2-torch-$mode.txt")
        if ((rc == 0)); then
          record "gpt2 torch $mode" ok "$line"
        else
          record "gpt2 torch $mode" FAIL "exit $rc"
        fi
      done
    fi
  fi
fi

# ---- training: ember train next to its PyTorch twin ----------------------------------------------
if ((run_train)); then
  data=""
  for d in "$deps/data/fashion-mnist" /usr/share/datasets/fashion-mnist; do
    if [[ -f $d/train-images-idx3-ubyte || -f $d/train-images-idx3-ubyte.gz ]]; then
      data=$d
      break
    fi
  done
  step_t0=$(now)
  if [[ -z "$gpu_names" ]]; then
    record "training" skip "no GPU"
  elif [[ -z "$data" ]]; then
    record "training" skip "no Fashion-MNIST (scripts/gpu-bundle.sh without --no-data)"
  elif [[ -z "$python" ]]; then
    record "training" skip "no python3"
  elif fits "training" 30; then
    epochs=$((quick ? 1 : 2))
    begin "ember train and PyTorch, cnn and mlp, $epochs epochs, batch 64 (data $data)"
    # Four runs (two models, two frameworks), each stopped at a quarter of the box.
    tsecs=$(box 150)
    timeout -k 5 $((tsecs + 10)) "$python" "$ROOT/bench/gpu/train_compare.py" --ember "$ember" \
      --data "$data" --device cuda --epochs "$epochs" --batch-size 64 --work-dir "$logs/train" \
      --json "$logs/train.json" --timeout $((tsecs / 4)) >"$logs/train.txt" 2>&1
    rc=$?
    brief=$(grep -m1 '^summary: ' "$logs/train.txt" | sed 's/^summary: //')
    if ((rc == 0)); then
      record "training" ok "$brief"
    else
      record "training" FAIL "exit $rc: $(grep -m1 '^PROBLEM' "$logs/train.txt") $brief"
    fi
    # The same under bf16 autocast on both sides (ember train --amp bf16, torch.autocast), one
    # epoch: the step time with and without mixed precision next to PyTorch's.
    if fits "training amp" 30; then
      begin "ember train and PyTorch under bf16 autocast, cnn and mlp, 1 epoch, batch 64"
      tsecs=$(box 100)
      timeout -k 5 $((tsecs + 10)) "$python" "$ROOT/bench/gpu/train_compare.py" --ember "$ember" \
        --data "$data" --device cuda --epochs 1 --batch-size 64 --amp bf16 \
        --work-dir "$logs/train-amp" --json "$logs/train-amp.json" --timeout $((tsecs / 4)) \
        >"$logs/train-amp.txt" 2>&1
      rc=$?
      brief=$(grep -m1 '^summary: ' "$logs/train-amp.txt" | sed 's/^summary: //')
      if ((rc == 0)); then
        record "training amp" ok "$brief"
      else
        record "training amp" FAIL "exit $rc: $(grep -m1 '^PROBLEM' "$logs/train-amp.txt") $brief"
      fi
    fi
  fi
fi

# ---- compute-sanitizer over the harness, time-boxed, last: it takes what the budget has left -----
# sanitize TOOL SECONDS FILTER: runs the harness's FILTER cases under the tool for at most
# SECONDS; one summary line, and the step's status from the errors it reported.
sanitize() {
  local tool=$1 secs filter=$3 log=$logs/sanitizer-$1.log rc total done_n bad errors warns api
  secs=$(box "$2")
  begin "compute-sanitizer $tool (at most $secs s): $filter"
  total=$("$harness" --gtest_list_tests --gtest_filter="$filter" | grep -c '^  ')
  timeout -k 5 -s INT "$secs" "$sanitizer" --tool "$tool" --print-limit 50 \
    "$harness" --gtest_filter="$filter" --gtest_color=no >"$log" 2>&1
  rc=$?
  read -r done_n bad _ < <(gtest_counts "$log")
  # Error reports are the unindented "========= ..." lines that are not banners or summaries.
  grep -E '^========= [^ ]' "$log" |
    grep -vE 'COMPUTE-SANITIZER|(ERROR|RACECHECK|LEAK) SUMMARY|Target application returned' \
      >"$log.reports" || true
  api=$(grep -c '^========= Program hit' "$log.reports")
  warns=$(grep -c '^========= Warning' "$log.reports")
  errors=$(($(grep -c '' "$log.reports") - api - warns))
  local cover="all $total cases"
  if ((rc == 124 || rc == 137 || done_n + bad < total)); then
    cover="$((done_n + bad)) of $total cases before the time box"
  fi
  local detail="$cover; $errors errors, $warns warnings, $api API errors; $bad test failures"
  echo "$tool over '$filter': $detail" >>"$logs/sanitizer-summary.txt"
  sort "$log.reports" | uniq -c | sort -rn | head -n 10 | sed 's/^/    /' \
    >>"$logs/sanitizer-summary.txt"
  if ((errors > 0 || bad > 0)); then
    record "compute-sanitizer $tool" FAIL "$detail"
  elif ((warns > 0 || api > 0)); then
    record "compute-sanitizer $tool" warn "$detail"
  else
    record "compute-sanitizer $tool" ok "$detail"
  fi
}
if ((run_sanitizer)); then
  if ((!run_harness)); then  # the device cases the harness would have run
    device_cases=$("$harness" --gtest_list_tests --gtest_filter='*/cuda' 2>/dev/null |
      grep -c '^  ')
  fi
  if ((device_cases == 0)); then
    step_t0=$(now)
    record "compute-sanitizer" skip "no CUDA device"
  elif [[ -z "$sanitizer" ]]; then
    step_t0=$(now)
    record "compute-sanitizer" skip "compute-sanitizer not found"
  else
    s=$((quick ? sanitizer_secs / 2 : sanitizer_secs))
    fits "compute-sanitizer memcheck" 10 && sanitize memcheck "$s" "$MEMCHECK_FILTER"
    fits "compute-sanitizer racecheck" 8 && sanitize racecheck $((s * 7 / 10)) "$SHARED_FILTER"
    fits "compute-sanitizer synccheck" 6 && sanitize synccheck $((s * 4 / 10)) "$SHARED_FILTER"
  fi
fi

# ---- report --------------------------------------------------------------------------------------
echo
summary_text
publish
echo
echo "logs: $logs"
if [[ -n "$out_dir" ]]; then
  echo "results: $out_dir ($(find "$out_dir" -maxdepth 1 -type f | wc -l) files)"
fi
if ((failed)); then
  say "FAILED"
  exit 1
fi
say "all checks passed"
