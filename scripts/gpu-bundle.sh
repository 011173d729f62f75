#!/usr/bin/env bash
# Gathers, on a machine with Debian's development packages, what a GPU machine without them (no
# internet, no -dev packages) needs to build ember and its tests, into .gpu-deps/ (ignored by git):
#
#   .gpu-deps/src/googletest/   GoogleTest sources (built there by gpu-check.sh)
#   .gpu-deps/include/          OpenBLAS's cblas.h, f77blas.h, openblas_config.h
#   .gpu-deps/lib/              libopenblas.so (+ soname links), libgfortran, libquadmath
#   .gpu-deps/include/cudnn/    cuDNN's headers (when found), for the cuDNN convolution path
#
#   scripts/gpu-bundle.sh [--out DIR]
#
# Then copy the tree, .gpu-deps/ included, to the GPU machine and run scripts/gpu-check.sh there.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$ROOT/.gpu-deps
LIMIT_MIB=60

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; }
die() { echo "[gpu-bundle] error: $*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || die "--out needs a directory"; out=$2; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done

gtest_src=/usr/src/googletest
[[ -f $gtest_src/CMakeLists.txt ]] || die "no GoogleTest sources in $gtest_src (apt-get install googletest)"

# OpenBLAS: the library the loader resolves, and the directory of cblas.h.
# awk reads to the end: leaving early would kill ldconfig with SIGPIPE, fatal under pipefail.
blas_lib=$(ldconfig -p | awk '!found && (/libopenblas\.so\.0 .*x86-64/ || /libopenblas\.so\.0 /) { print $NF; found = 1 }')
[[ -n "$blas_lib" && -e "$blas_lib" ]] || die "libopenblas.so.0 not found (apt-get install libopenblas-dev)"
blas_real=$(readlink -f "$blas_lib")
cblas_h=""
for dir in /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas /usr/include \
  /usr/include/"$(uname -m)"-linux-gnu/openblas-pthread; do
  if [[ -f $dir/cblas.h ]]; then cblas_h=$dir; break; fi
done
[[ -n "$cblas_h" ]] || die "cblas.h not found (apt-get install libopenblas-dev)"

rm -rf "$out"
mkdir -p "$out/src" "$out/include" "$out/lib"
cp -a "$gtest_src" "$out/src/googletest"
for h in cblas.h f77blas.h openblas_config.h; do
  [[ -f $cblas_h/$h ]] && cp "$cblas_h/$h" "$out/include/"
done
cp "$blas_real" "$out/lib/"
base=$(basename "$blas_real")
ln -sf "$base" "$out/lib/libopenblas.so.0"
ln -sf "$base" "$out/lib/libopenblas.so"
# OpenBLAS's own runtime dependencies that a machine without gfortran lacks.
for dep in libgfortran.so.5 libquadmath.so.0; do
  path=$(ldd "$blas_real" | awk -v d="$dep" '$1 == d { print $3 }')
  if [[ -n "$path" ]]; then
    cp "$(readlink -f "$path")" "$out/lib/$dep"
  fi
done
# cuDNN's headers: the GPU machine's toolkit may lack them (PyTorch brings only the library).
cudnn_h=""
for dir in "${CUDNN_INCLUDE_DIR:-}" /usr/local/cuda/include /usr/include /usr/include/"$(uname -m)"-linux-gnu; do
  if [[ -n "$dir" && -f $dir/cudnn.h ]]; then cudnn_h=$dir; break; fi
done
if [[ -n "$cudnn_h" ]]; then
  mkdir -p "$out/include/cudnn"
  for h in "$cudnn_h"/cudnn*.h; do
    [[ $h == *_v[0-9].h ]] || cp "$h" "$out/include/cudnn/"
  done
else
  echo "[gpu-bundle] cudnn.h not found: the GPU build will use im2col for convolutions"
fi
cat > "$out/README" <<README
Made by scripts/gpu-bundle.sh on $(hostname) ($(date -u +%Y-%m-%d)); used by scripts/gpu-check.sh.
OpenBLAS: $blas_real
cblas.h:  $cblas_h
cudnn.h:  ${cudnn_h:-not found}
GoogleTest sources: $gtest_src
README

size_kib=$(du -sk "$out" | cut -f1)
size_mib=$(((size_kib + 1023) / 1024))
echo "[gpu-bundle] $out: $size_mib MiB"
(cd "$out" && find . -maxdepth 2 -mindepth 1 | sort | sed 's/^/  /')
((size_mib <= LIMIT_MIB)) || die "the bundle is $size_mib MiB, over the $LIMIT_MIB MiB limit"
