#!/usr/bin/env bash
# Gathers, on a machine with Debian's development packages, what a GPU machine without them (no
# internet, no -dev packages) needs to build ember and its tests and to run the training
# comparison, into .gpu-deps/ (ignored by git), xz-compressed where that pays:
#
#   .gpu-deps/googletest.tar.xz          GoogleTest sources (built there by gpu-check.sh)
#   .gpu-deps/include/                   OpenBLAS's cblas.h, f77blas.h, openblas_config.h; zlib.h
#                                        and zconf.h (ember reads gzip-compressed IDX files)
#   .gpu-deps/include/cudnn/             cuDNN's headers (when found), for the cuDNN convolutions
#   .gpu-deps/lib/*.xz                   libopenblas.so.0, libgfortran.so.5, libquadmath.so.0
#   .gpu-deps/lib/zlib/libz.so.1         zlib for the link (off LD_LIBRARY_PATH: only ember's
#                                        programs, through their run path, load this copy)
#   .gpu-deps/data/fashion-mnist/*.xz    the four Fashion-MNIST IDX files (dataset-fashion-mnist)
#   .gpu-deps/MANIFEST                   what to unpack where (scripts/gpu-check.sh reads it)
#
#   scripts/gpu-bundle.sh [--out DIR] [--no-data]
#
#   --no-data   leave Fashion-MNIST out (gpu-check.sh then skips the training comparison unless
#               the GPU machine has the dataset in /usr/share/datasets/fashion-mnist)
#
# A compressed file is reused from the previous bundle when its source is unchanged (same path,
# size and time), so only the first run pays for xz (about 2 CPU-minutes). The bundle must stay
# under 60 MiB, quick to copy; the script fails above that. Then copy
# the tree, .gpu-deps/ included, to the GPU machine and run scripts/gpu-check.sh there, which
# unpacks the bundle into its build tree (BUILD_DIR/gpu-deps/) on its first run.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$ROOT/.gpu-deps
with_data=1
LIMIT_MIB=60
DATA_SRC=/usr/share/datasets/fashion-mnist

usage() {  # the comment block at the top of this file
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
die() { echo "[gpu-bundle] error: $*" >&2; exit 1; }

while (($#)); do
  case "$1" in
    --out) (($# >= 2)) || die "--out needs a directory"; out=$2; shift ;;
    --no-data) with_data=0 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument '$1'" ;;
  esac
  shift
done
[[ "$out" = /* ]] || out=$PWD/$out
command -v xz >/dev/null || die "xz not found (apt-get install xz-utils)"

gtest_src=/usr/src/googletest
[[ -f $gtest_src/CMakeLists.txt ]] ||
  die "no GoogleTest sources in $gtest_src (apt-get install googletest)"

# OpenBLAS: the library the loader resolves, and the directory of cblas.h.
# awk reads to the end: leaving early would kill ldconfig with SIGPIPE, fatal under pipefail.
blas_lib=$(ldconfig -p |
  awk '!found && (/libopenblas\.so\.0 .*x86-64/ || /libopenblas\.so\.0 /) { print $NF; found = 1 }')
[[ -n "$blas_lib" && -e "$blas_lib" ]] ||
  die "libopenblas.so.0 not found (apt-get install libopenblas-dev)"
blas_real=$(readlink -f "$blas_lib")
cblas_h=""
for dir in /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas /usr/include \
  /usr/include/"$(uname -m)"-linux-gnu/openblas-pthread; do
  if [[ -f $dir/cblas.h ]]; then cblas_h=$dir; break; fi
done
[[ -n "$cblas_h" ]] || die "cblas.h not found (apt-get install libopenblas-dev)"
zlib_lib=$(ldconfig -p | awk '!found && /libz\.so\.1 / { print $NF; found = 1 }')
[[ -n "$zlib_lib" && -f /usr/include/zlib.h && -f /usr/include/zconf.h ]] ||
  die "zlib's headers or library not found (apt-get install zlib1g-dev)"
IDX_FILES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte
  t10k-labels-idx1-ubyte)
if ((with_data)); then
  for f in "${IDX_FILES[@]}"; do
    [[ -f $DATA_SRC/$f.gz || -f $DATA_SRC/$f ]] ||
      die "$DATA_SRC/$f(.gz) not found (apt-get install dataset-fashion-mnist, or --no-data)"
  done
fi

# The new bundle is made beside the old one, which lends its compressed files where it can.
new=$out.new
old=$out
rm -rf "$new"
trap 'rm -rf "$new"' EXIT
mkdir -p "$new/include" "$new/lib" "$new/data/fashion-mnist"
: >"$new/MANIFEST"

# xz_file SRC DEST: DEST.xz (relative to the bundle) holds SRC's bytes (SRC may be .gz); the
# MANIFEST line "xz DEST" tells gpu-check.sh to unpack it.
xz_file() {
  local src=$1 dest=$2 stamp
  stamp="$(readlink -f "$src") $(stat -L -c '%s %Y' "$src")"
  mkdir -p "$(dirname "$new/$dest")"
  if [[ -f $old/$dest.xz && -f $old/$dest.xz.src &&
    "$(cat "$old/$dest.xz.src")" == "$stamp" ]]; then
    cp "$old/$dest.xz" "$new/$dest.xz"
  elif [[ $src == *.gz ]]; then
    gzip -dc "$src" | xz -6 -T0 -c >"$new/$dest.xz"
  else
    xz -6 -T0 -c "$src" >"$new/$dest.xz"
  fi
  echo "$stamp" >"$new/$dest.xz.src"
  echo "xz $dest" >>"$new/MANIFEST"
}

# GoogleTest: one tarball of the source tree.
tar -C "$(dirname "$gtest_src")" -cf - "$(basename "$gtest_src")" |
  xz -6 -T0 -c >"$new/googletest.tar.xz"
echo "tar googletest.tar.xz src" >>"$new/MANIFEST"

for h in cblas.h f77blas.h openblas_config.h; do
  [[ -f $cblas_h/$h ]] && cp "$cblas_h/$h" "$new/include/"
done
cp /usr/include/zlib.h /usr/include/zconf.h "$new/include/"
mkdir -p "$new/lib/zlib"
cp "$(readlink -f "$zlib_lib")" "$new/lib/zlib/libz.so.1"
ln -s libz.so.1 "$new/lib/zlib/libz.so"
xz_file "$blas_real" lib/libopenblas.so.0
echo "link lib/libopenblas.so libopenblas.so.0" >>"$new/MANIFEST"
# OpenBLAS's own runtime dependencies that a machine without gfortran lacks.
for dep in libgfortran.so.5 libquadmath.so.0; do
  path=$(ldd "$blas_real" | awk -v d="$dep" '$1 == d { print $3 }')
  if [[ -n "$path" ]]; then
    xz_file "$(readlink -f "$path")" "lib/$dep"
  fi
done
# cuDNN's headers: the GPU machine's toolkit may lack them (PyTorch brings only the library).
cudnn_h=""
for dir in "${CUDNN_INCLUDE_DIR:-}" /usr/local/cuda/include /usr/include \
  /usr/include/"$(uname -m)"-linux-gnu; do
  if [[ -n "$dir" && -f $dir/cudnn.h ]]; then cudnn_h=$dir; break; fi
done
if [[ -n "$cudnn_h" ]]; then
  mkdir -p "$new/include/cudnn"
  for h in "$cudnn_h"/cudnn*.h; do
    [[ $h == *_v[0-9].h ]] || cp "$h" "$new/include/cudnn/"
  done
else
  echo "[gpu-bundle] cudnn.h not found: the GPU build will use im2col for convolutions"
fi
if ((with_data)); then
  for f in "${IDX_FILES[@]}"; do
    src=$DATA_SRC/$f
    [[ -f $src ]] || src=$src.gz
    xz_file "$src" "data/fashion-mnist/$f"
  done
fi
cat >"$new/README" <<README
Made by scripts/gpu-bundle.sh on $(hostname) ($(date -u +%Y-%m-%d)); used by scripts/gpu-check.sh,
which unpacks the files listed in MANIFEST into its build tree on its first run.
OpenBLAS: $blas_real
zlib:     $zlib_lib
cblas.h:  $cblas_h
cudnn.h:  ${cudnn_h:-not found}
GoogleTest sources: $gtest_src
Fashion-MNIST: $( ((with_data)) && echo "$DATA_SRC" || echo "not included (--no-data)")
README

rm -rf "$old"
mv "$new" "$out"
size_kib=$(du -sk "$out" | cut -f1)
size_mib=$(((size_kib + 1023) / 1024))
echo "[gpu-bundle] $out: $size_mib MiB"
(cd "$out" && find . -type f ! -name '*.src' | sort | xargs du -k |
  awk '{ printf "  %7d KiB  %s\n", $1, $2 }')
((size_mib <= LIMIT_MIB)) || die "the bundle is $size_mib MiB, over the $LIMIT_MIB MiB limit"
