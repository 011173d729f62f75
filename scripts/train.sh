#!/usr/bin/env bash
# Sets up a machine, builds ember in Release and runs its main job: `ember train`, which trains
# the default CNN on Fashion-MNIST (Debian's dataset-fashion-mnist, installed with the other
# dependencies) on the best device present. Arguments are passed on to `ember train`
# (see `ember train --help`), e.g. `scripts/train.sh --model mlp --epochs 3`.
#
#   scripts/train.sh [ARGS...]
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
  echo "[train] error: $ember was not built: this checkout has no ember command (tools/ember/)" >&2
  exit 1
fi
echo "[train] $ember train $*"
exec "$ember" train "$@"
