#!/usr/bin/env bash
# Style checks. On the C++/CUDA files selected below: clang-format 14 (.clang-format), lines of at
# most 100 columns, at most 1,000 lines a file (split by family). On every .cu/.cuh file, the CUDA
# rules: kernels are launched through the emulator's `launch` helper, never with raw <<<...>>>,
# and dynamic shared memory comes from its helper, never from `extern __shared__`. On the whole
# tree, the layer order of the #include graph (scripts/check-layers.sh, docs/design.md).
#
#   scripts/lint.sh              files changed since the merge base with $EMBER_LINT_BASE (main),
#                                plus uncommitted and untracked ones
#   scripts/lint.sh --all        every tracked C++/CUDA file (what CI runs)
#   scripts/lint.sh FILE...      just these files
#
# A line that must break a CUDA rule (the launch helper itself) says so with `lint: allow-cuda`.
# EMBER_CLANG_FORMAT names the clang-format binary (default: clang-format-14, else clang-format).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
SOURCE_GLOBS=('*.h' '*.hpp' '*.c' '*.cc' '*.cpp' '*.cu' '*.cuh')

mode=changed
files=()
case "${1:-}" in
  -h | --help) usage; exit 0 ;;
  --all) mode=all ;;
  "") ;;
  -*) usage >&2; echo "[lint] unknown argument '$1'" >&2; exit 2 ;;
  *) mode=given; files=("$@") ;;
esac

if [[ $mode == all ]]; then
  mapfile -t files < <(git ls-files -- "${SOURCE_GLOBS[@]}")
elif [[ $mode == changed ]]; then
  base_ref=${EMBER_LINT_BASE:-main}
  git rev-parse -q --verify "$base_ref^{commit}" >/dev/null ||
    base_ref=origin/${EMBER_LINT_BASE:-main}
  ranges=()
  if base=$(git merge-base HEAD "$base_ref" 2>/dev/null); then
    ranges=("$base")
  else
    echo "[lint] no '$base_ref' to compare with: checking uncommitted changes only"
    ranges=(HEAD)
  fi
  mapfile -t files < <(
    {
      git diff --name-only --diff-filter=d "${ranges[@]}" -- "${SOURCE_GLOBS[@]}"
      git ls-files --others --exclude-standard -- "${SOURCE_GLOBS[@]}"
    } | sort -u
  )
fi

present=()
for f in "${files[@]}"; do
  [[ -f "$f" ]] && present+=("$f")
done
files=("${present[@]+"${present[@]}"}")
status=0

# The clang-format whose output .clang-format was written for (versions format differently).
find_clang_format() {
  local c
  for c in ${EMBER_CLANG_FORMAT:-} clang-format-14 clang-format; do
    command -v "$c" >/dev/null 2>&1 || continue
    if [[ $("$c" --version 2>/dev/null) =~ version\ 14\. ]]; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# ---- formatting -------------------------------------------------------------------------------
if ((${#files[@]} == 0)); then
  echo "[lint] format: no changed C++/CUDA files"
elif ! clang_format=$(find_clang_format); then
  echo "[lint] format: clang-format 14 not found (scripts/install-deps.sh installs it)" >&2
  status=1
else
  # One clang-format for all the files; each file it would change is named in its warnings.
  mapfile -t bad < <(printf '%s\0' "${files[@]}" |
    xargs -0 "$clang_format" --dry-run --Werror 2>&1 >/dev/null |
    sed -nE 's/^(.+):[0-9]+:[0-9]+: (error|warning): code should be clang-formatted.*/\1/p' |
    sort -u)
  if ((${#bad[@]})); then
    echo "[lint] format: these files differ from .clang-format (fix: clang-format -i FILE):"
    printf '  %s\n' "${bad[@]}"
    status=1
  else
    echo "[lint] format: ${#files[@]} file(s) ok"
  fi
fi

# ---- line length and file size ----------------------------------------------------------------
if ((${#files[@]})); then
  # Characters, not bytes: a line with a non-ASCII character counts it once.
  long=$(LC_ALL=C.UTF-8 grep -HnP '^.{101,}$' -- "${files[@]}" | cut -d: -f1,2 || true)
  if [[ -n "$long" ]]; then
    echo "[lint] lines: longer than 100 columns:"
    echo "$long" | sed 's/^/  /'
    status=1
  else
    echo "[lint] lines: ${#files[@]} file(s) within 100 columns"
  fi
  big=$(wc -l -- "${files[@]}" | awk '$2 != "total" && $1 > 1000 { print "  " $2 ": " $1 " lines" }')
  if [[ -n "$big" ]]; then
    echo "[lint] size: over the 1,000-line budget (split the file by family):"
    echo "$big"
    status=1
  else
    echo "[lint] size: ${#files[@]} file(s) within 1,000 lines"
  fi
fi

# ---- CUDA rules -------------------------------------------------------------------------------
mapfile -t cuda_files < <(git ls-files --cached --others --exclude-standard -- '*.cu' '*.cuh')
violations=""
if ((${#cuda_files[@]})); then
  violations=$(grep -HnE '<<<|extern[[:space:]]+__shared__' -- "${cuda_files[@]}" 2>/dev/null |
    grep -v 'lint: allow-cuda' || true)
fi
if [[ -n "$violations" ]]; then
  echo "[lint] cuda: raw <<<>>> launches or extern __shared__ (use the launch helper):"
  echo "$violations" | sed 's/^/  /'
  status=1
else
  echo "[lint] cuda: ${#cuda_files[@]} .cu/.cuh file(s) ok"
fi

# ---- layers -----------------------------------------------------------------------------------
"$ROOT/scripts/check-layers.sh" --root "$ROOT" || status=1

exit "$status"
