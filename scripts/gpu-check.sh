#!/usr/bin/env bash
# Checks ember on a machine with an NVIDIA GPU in one go: builds it for the GPU's architecture,
# runs the `cuda`-labelled tests, `ember doctor`, every GPU benchmark (bench_cuda_*) and the
# PyTorch reference (bench/gpu/torch_reference.py), then prints a summary and the ember and
# PyTorch numbers side by side. Needs nvcc and CMake; no internet, no -dev packages: GoogleTest and
# OpenBLAS come from .gpu-deps/ (made by scripts/gpu-bundle.sh on a machine that has them).
#
#   scripts/gpu-check.sh [--archs "90"] [--build-dir DIR] [--deps DIR] [--jobs N]
#                        [--no-bench] [--no-torch] [--hide-system]
#
#   --archs        CUDA architectures (default: the GPU's, from nvidia-smi or torch; else 90)
#   --deps         the bundle (default .gpu-deps/); without one, the system's packages are used
#   --hide-system  find nothing under /usr (check that the bundle alone is enough; for testing
#                  this script on a machine that has the -dev packages)
#
# Logs go to BUILD_DIR/gpu-check/. Exit code: 0 when everything that ran passed (on a machine
# without a GPU: the build and the CPU-side checks), 1 when something failed, 2 usage error.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$ROOT/build-gpu
deps=$ROOT/.gpu-deps
archs=""
jobs=$(nproc 2>/dev/null || echo 2)
run_bench=1
run_torch=1
hide_system=0

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
die() { echo "[gpu-check] error: $*" >&2; exit 1; }
usage_error() { usage >&2; echo "[gpu-check] error: $*" >&2; exit 2; }
say() { echo "[gpu-check] $*"; }

while (($#)); do
  case "$1" in
    --archs) (($# >= 2)) || usage_error "--archs needs a value"; archs=$2; shift ;;
    --build-dir) (($# >= 2)) || usage_error "--build-dir needs a directory"; build_dir=$2; shift ;;
    --deps) (($# >= 2)) || usage_error "--deps needs a directory"; deps=$2; shift ;;
    --jobs) (($# >= 2)) || usage_error "--jobs needs a number"; jobs=$2; shift ;;
    --no-bench) run_bench=0 ;;
    --no-torch) run_torch=0 ;;
    --hide-system) hide_system=1 ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$build_dir" = /* ]] || build_dir=$PWD/$build_dir
[[ "$deps" = /* ]] || deps=$PWD/$deps
logs=$build_dir/gpu-check
mkdir -p "$logs" || die "cannot create $logs"

# ---- summary table: one row per step ----------------------------------------------------------------
declare -a rows=()
failed=0
record() {  # step status detail
  rows+=("$(printf '%-28s %-6s %s' "$1" "$2" "$3")")
  [[ $2 == FAIL ]] && failed=1
  return 0
}

# ---- the machine --------------------------------------------------------------------------------------
gpu_names=""
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_names=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true)
fi
python=$(command -v python3 || true)
has_torch_cuda=0
if [[ -n "$python" ]] && "$python" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
  has_torch_cuda=1
fi
if [[ -z "$archs" ]]; then
  cap=""
  if [[ -n "$gpu_names" ]]; then
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
  fi
  if [[ -z "$cap" && $has_torch_cuda == 1 ]]; then
    cap=$("$python" -c 'import torch; a, b = torch.cuda.get_device_capability(0); print(f"{a}{b}")')
  fi
  archs=${cap:-90}
fi
if [[ -n "$gpu_names" ]]; then
  say "GPUs:"
  while IFS= read -r line; do echo "  $line"; done <<<"$gpu_names"
else
  say "no GPU found (nvidia-smi is missing or lists none): building and running the CPU-side checks only"
fi
say "CUDA architectures: $archs"

nvcc=$(command -v nvcc || true)
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
  [[ -z "$nvcc" && -n "$d" && -x $d/bin/nvcc ]] && nvcc=$d/bin/nvcc
done
[[ -n "$nvcc" ]] || die "nvcc not found (put the CUDA toolkit's bin/ in PATH or set CUDA_HOME)"
command -v cmake >/dev/null || die "cmake not found"

# ---- dependencies: the bundle (GoogleTest built from source, OpenBLAS) or the system -------------
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON "-DEMBER_CUDA_ARCHS=$archs"
  -DCMAKE_CUDA_COMPILER="$nvcc" -DEMBER_BUILD_TESTS=ON -DEMBER_BUILD_BENCH=ON -DEMBER_BUILD_TOOLS=ON)
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if ((hide_system)); then
  # No package or library from /usr or /: every find_* must use the bundle. The tools themselves
  # (compilers, ninja, ccache, python) are named explicitly since their directories are hidden too.
  cmake_args+=("-DCMAKE_IGNORE_PREFIX_PATH=/usr;/"
    "-DCMAKE_C_COMPILER=$(command -v "${CC:-cc}")" "-DCMAKE_CXX_COMPILER=$(command -v "${CXX:-c++}")")
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
if [[ -z "${EMBER_CUDNN_LIBRARY:-}" && -n "$python" ]] &&
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
        print(os.path.join(d, "libcudnn.so.9") if os.path.exists(os.path.join(d, "libcudnn.so.9")) else hits[0])
        break
PY
)
  if [[ -n "$torch_cudnn" ]]; then
    export EMBER_CUDNN_LIBRARY=$torch_cudnn
    say "cuDNN from PyTorch: $torch_cudnn"
  fi
fi

# ---- configure and build --------------------------------------------------------------------------------
say "configuring $build_dir"
if ! cmake -S "$ROOT" -B "$build_dir" "${generator[@]}" "${cmake_args[@]}" >"$logs/configure.log" 2>&1; then
  tail -n 40 "$logs/configure.log"
  die "configure failed (see $logs/configure.log)"
fi
if ((hide_system)); then
  # Proof that the bundle was used: where CMake found GoogleTest, OpenBLAS and cblas.h.
  grep -E '^(GTest_DIR|BLAS_openblas_LIBRARY|EMBER_CBLAS_INCLUDE_DIR):' "$build_dir/CMakeCache.txt" |
    sed 's/^/  /'
  if grep -E '^(GTest_DIR|BLAS_openblas_LIBRARY|EMBER_CBLAS_INCLUDE_DIR):' "$build_dir/CMakeCache.txt" |
    grep -qv "$deps"; then
    die "a dependency was found outside $deps"
  fi
fi
record "configure" ok "archs $archs, $(grep -m1 -o 'CUDA backend on (nvcc [^,]*' "$logs/configure.log" | sed 's/.*(//')"
say "building (log: $logs/build.log)"
targets=(ember_cli cuda_tests gpu_benchmarks)
if ! cmake --build "$build_dir" -j "$jobs" --target "${targets[@]}" >"$logs/build.log" 2>&1; then
  tail -n 40 "$logs/build.log"
  record "build" FAIL "see $logs/build.log"
  die "build failed"
fi
record "build" ok "${targets[*]}"

# ---- ember doctor ------------------------------------------------------------------------------------------
ember=$build_dir/tools/ember/ember
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

# ---- cuda tests -------------------------------------------------------------------------------------------
say "ctest -L cuda"
(cd "$build_dir" && ctest -L cuda --output-on-failure --no-tests=error -j 4 --timeout 900) \
  >"$logs/ctest-cuda.log" 2>&1
ctest_rc=$?
summary=$(grep -E 'tests passed|No tests were found' "$logs/ctest-cuda.log" | tail -n 1)
skipped=$(grep -c '\*\*\*Skipped\|Not Run (Disabled)\| Skipped ' "$logs/ctest-cuda.log" || true)
if ((ctest_rc == 0)); then
  record "cuda tests" ok "$summary; $skipped skipped"
else
  grep -E 'Failed|\*\*\*' "$logs/ctest-cuda.log" | tail -n 20
  record "cuda tests" FAIL "$summary (see $logs/ctest-cuda.log)"
fi

# ---- benchmarks ------------------------------------------------------------------------------------------------
: >"$logs/bench-ember.txt"
if ((run_bench)); then
  shopt -s nullglob
  benches=("$build_dir"/bench/bench_cuda_*)
  shopt -u nullglob
  for b in "${benches[@]}"; do
    [[ -x $b && -f $b ]] || continue
    name=$(basename "$b")
    say "running $name"
    if timeout 900 "$b" >"$logs/$name.txt" 2>&1; then
      record "$name" ok "$(grep -c '' "$logs/$name.txt") lines"
    else
      record "$name" FAIL "exit $? (see $logs/$name.txt)"
    fi
    cat "$logs/$name.txt" >>"$logs/bench-ember.txt"
  done
  ((${#benches[@]})) || record "ember benchmarks" skip "no bench_cuda_* built"
fi
: >"$logs/bench-torch.txt"
if ((run_torch)); then
  if [[ $has_torch_cuda == 1 ]]; then
    say "running the PyTorch reference"
    if timeout 1200 "$python" "$ROOT/bench/gpu/torch_reference.py" >"$logs/bench-torch.txt" 2>&1; then
      record "torch reference" ok "torch $("$python" -c 'import torch; print(torch.__version__)')"
    else
      record "torch reference" FAIL "see $logs/bench-torch.txt"
    fi
  else
    record "torch reference" skip "no PyTorch with CUDA here"
  fi
fi

# ---- report ---------------------------------------------------------------------------------------------------
echo
echo "================ gpu-check summary ================"
printf '%-28s %-6s %s\n' step status detail
printf '%s\n' "${rows[@]}"
if [[ -n "$python" && ( -s $logs/bench-ember.txt || -s $logs/bench-torch.txt ) ]]; then
  echo
  "$python" "$ROOT/bench/gpu/side_by_side.py" "$logs/bench-ember.txt" "$logs/bench-torch.txt"
fi
echo
echo "logs: $logs"
if [[ -z "$gpu_names" ]]; then
  say "no GPU on this machine: the build and the CPU-side checks ran; nothing was measured"
fi
if ((failed)); then
  say "FAILED"
  exit 1
fi
say "all checks passed"
