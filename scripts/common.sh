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
