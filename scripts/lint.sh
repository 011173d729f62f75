#!/usr/bin/env bash
# Style checks: clang-format on changed C++/CUDA files, and CUDA rules on every .cu/.cuh file
# (kernels are launched through the emulator's `launch` helper, never with raw <<<...>>>, and
# dynamic shared memory comes from its helper, never from `extern __shared__`).
#
#   scripts/lint.sh              files changed since the merge base with $EMBER_LINT_BASE (main),
#                                plus uncommitted and untracked ones
#   scripts/lint.sh --all        every tracked C++/CUDA file
#   scripts/lint.sh FILE...      just these files
#
# A line that must break a CUDA rule (the launch helper itself) says so with `lint: allow-cuda`.
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

status=0

# ---- formatting -------------------------------------------------------------------------------
if ((${#files[@]} == 0)); then
  echo "[lint] format: no changed C++/CUDA files"
elif ! command -v clang-format >/dev/null 2>&1; then
  echo "[lint] error: clang-format not found (apt-get install clang-format)" >&2
  status=1
else
  bad=()
  for f in "${files[@]}"; do
    [[ -f "$f" ]] || continue
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if ((${#bad[@]})); then
    echo "[lint] format: these files differ from .clang-format (fix: clang-format -i FILE):"
    printf '  %s\n' "${bad[@]}"
    status=1
  else
    echo "[lint] format: ${#files[@]} file(s) ok"
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

exit "$status"
