# Helpers sourced by the build scripts (not run on its own).

# CMakeLists.txt compiles through ccache when it is installed. Where ccache cannot write its cache
# (a read-only or missing home in some CI sandboxes) every compile would fail, so go without it.
# $1 names the calling script in the message.
ember_check_ccache() {
  command -v ccache >/dev/null 2>&1 || return 0
  [[ -z "${CCACHE_DISABLE:-}" ]] || return 0
  local dir
  dir=$(ccache -k cache_dir 2>/dev/null || true)
  if [[ -z "$dir" ]] || ! mkdir -p "$dir" 2>/dev/null || [[ ! -w "$dir" ]]; then
    echo "[$1] ccache cannot write its cache '$dir': compiling without it"
    export CCACHE_DISABLE=1
  fi
}

# Configures the clang tree of scripts/fuzz.sh and scripts/test-cpu-asan.sh (they share it):
# EMBER_FUZZ=ON (ASan + UBSan, libFuzzer coverage) at -O1, as libFuzzer's documentation suggests,
# a fraction of -O3's compile time under the sanitizers; no CUDA, benchmarks or tools.
ember_configure_fuzz_tree() {
  local root=$1 build_dir=$2 generator=()
  [[ ! -f $build_dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  CC=clang CXX=clang++ cmake -S "$root" -B "$build_dir" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DEMBER_FUZZ=ON -DEMBER_CUDA=OFF \
    -DEMBER_BUILD_BENCH=OFF -DEMBER_BUILD_TOOLS=OFF >/dev/null
}
