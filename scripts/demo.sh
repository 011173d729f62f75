#!/usr/bin/env bash
# Sets up a machine, builds ember in Release and runs its main job: `ember demo`, which picks
# the best device present. Arguments are passed on to `ember demo`.
#
#   scripts/demo.sh [ARGS...]
#
# EMBER_SKIP_DEPS=1 skips the package installation step.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/build

case "${1:-}" in
  -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
esac

"$ROOT/scripts/install-deps.sh"
"$ROOT/scripts/build.sh" --release --build-dir "$BUILD"

ember=$BUILD/tools/ember/ember
if [[ ! -x "$ember" ]]; then
  echo "[demo] error: $ember was not built: this checkout has no ember command (tools/ember/)" >&2
  exit 1
fi
echo "[demo] $ember demo $*"
exec "$ember" demo "$@"
