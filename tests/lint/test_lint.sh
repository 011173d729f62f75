#!/usr/bin/env bash
# The test of scripts/lint.sh: on a copy of the tree (the working tree's tracked and untracked
# files, committed in a fresh repository), `lint.sh --all` passes; then each kind of violation is
# planted alone in that copy and lint.sh must fail with the message of that check.
#
#   tests/lint/test_lint.sh SOURCE_DIR
set -euo pipefail

src=$(cd "${1:?usage: test_lint.sh SOURCE_DIR}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/ember-lint-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0

# ---- the copy -----------------------------------------------------------------------------------
copy=$work/tree
mkdir -p "$copy"
(
  cd "$src"
  git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
    [[ -f "$f" ]] && printf '%s\0' "$f"  # not the files deleted in the working tree
  done | tar --null -T - -cf -
) | tar -xf - -C "$copy"
git -C "$copy" -c init.defaultBranch=main init -q
git -C "$copy" add -A
git -C "$copy" -c user.name=lint -c user.email=lint@localhost commit -qm clean

# ---- the clean tree passes ----------------------------------------------------------------------
if out=$(cd "$copy" && scripts/lint.sh --all 2>&1); then
  echo "ok: lint.sh --all passes on the clean tree"
else
  echo "FAIL: lint.sh --all fails on the clean tree:"
  echo "$out" | sed 's/^/  /'
  failures=$((failures + 1))
fi

# ---- each planted violation fails ---------------------------------------------------------------
# expect_failure NAME PATTERN FILE CONTENT: writes CONTENT to FILE in the copy, runs lint.sh on
# the changes (against the clean commit), and wants a failing exit status and PATTERN in its
# output. The copy is reset after.
expect_failure() {
  local name=$1 pattern=$2 file=$3 content=$4 out rc=0
  mkdir -p "$(dirname "$copy/$file")"
  printf '%s\n' "$content" >"$copy/$file"
  out=$(cd "$copy" && EMBER_LINT_BASE=HEAD scripts/lint.sh 2>&1) || rc=$?
  if ((rc != 0)) && grep -qE "$pattern" <<<"$out"; then
    echo "ok: $name fails the lint"
  else
    echo "FAIL: $name: expected a failure matching /$pattern/, got status $rc:"
    echo "$out" | sed 's/^/  /'
    failures=$((failures + 1))
  fi
  git -C "$copy" checkout -q -- .
  git -C "$copy" clean -qfd
}

expect_failure "formatting" '^\[lint\] format: these files differ' src/core/planted.cpp \
  'int   planted( ) {return 1;}'

long_line="int planted_with_a_long_name = 1;  // $(printf 'x%.0s' $(seq 1 80))"
expect_failure "a line over 100 columns" '^  src/core/planted\.cpp:3$' src/core/planted.cpp \
  "// A line clang-format leaves alone, but longer than 100 columns.
// clang-format off
$long_line
// clang-format on"

expect_failure "a file over 1,000 lines" 'src/core/planted\.cpp: 1001 lines' src/core/planted.cpp \
  "$(printf '// line %d\n' $(seq 1 1001))"

expect_failure "a raw <<<>>> launch" 'planted\.cu:2:.*<<<' src/backend/cuda/planted.cu \
  '__global__ void planted_kernel() {}
void planted_launch() { planted_kernel<<<1, 1>>>(); }'

expect_failure "extern __shared__" 'planted\.cuh:2:.*extern __shared__' src/backend/cuda/planted.cuh \
  '__global__ void planted_kernel(float* out) {
  extern __shared__ float buffer[];
  out[0] = buffer[0];
}'

expect_failure "core including the op layer" \
  'src/core/planted\.cpp:1: core may not include "ops/op_utils\.h"' src/core/planted.cpp \
  '#include "ops/op_utils.h"'

expect_failure "a backend including a public op header" \
  'src/backend/cpu/planted\.cpp:1: backend may not include "ember/ops\.h"' \
  src/backend/cpu/planted.cpp '#include "ember/ops.h"'

expect_failure "nn calling a backend" \
  'src/nn/planted\.cpp:1: nn may not include "backend/backend\.h"' src/nn/planted.cpp \
  '#include "backend/backend.h"'

expect_failure "nn reaching backend() through the op layer's helpers" \
  'src/nn/planted\.cpp:1: "ops/op_utils\.h" is private to the op layer' src/nn/planted.cpp \
  '#include "ops/op_utils.h"'

expect_failure "a folder in no layer" 'src/planted/x\.cpp: src/planted/ is in no layer' \
  src/planted/x.cpp '// Nothing.'

if ((failures)); then
  echo "test_lint: $failures failure(s)"
  exit 1
fi
echo "test_lint: all passed"
