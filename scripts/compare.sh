#!/usr/bin/env bash
# ember vs libtorch on the CPU, side by side: see bench/compare/run.sh (arguments are passed on).
exec "$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bench/compare/run.sh" "$@"
