// Data-movement kernels: copy with dtype conversion (ember's cast, as on the CPU), transposing
// copies through shared-memory tiles, and fill. Same-dtype copies and fills move elements by size.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <algorithm>
#include <cstring>

#include "backend/cuda/elementwise_kernels.cuh"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

template <class D, class S>
struct CastFn {
  EMBER_HD D operator()(S x) const { return cast<D>(x); }
};

template <class T>
struct ConstFn {
  T value;
  EMBER_HD T operator()() const { return value; }
};

// ---- transposing copy ------------------------------------------------------------------------
// dst is dense along `cols`, src along `rows`; each block moves 32x32 tiles through shared
// memory (rows padded to 33 against bank conflicts), reading src rows and writing dst rows.

constexpr int kTile = 32;
constexpr int kTileRows = 8;  // threads per tile column: each moves kTile / kTileRows elements

struct TileGeom {
  int64_t rows = 0, cols = 0;
  int64_t dst_row_stride = 0;  // dst's stride along rows (its stride along cols is 1)
  int64_t src_col_stride = 0;  // src's stride along cols (its stride along rows is 1)
  int64_t tiles_r = 0, tiles_c = 0, batches = 1;
  Strided<2> batch;  // the other dims
};

template <class D, class S>
__global__ void __launch_bounds__(kTile* kTileRows, kMinBlocksPerSm)
    transpose_copy_kernel(D* dst, const S* src, TileGeom t) {
  SIMT_DYNAMIC_SHARED(S, tile);  // kTile x (kTile + 1)
  const int64_t tiles = t.tiles_r * t.tiles_c * t.batches;
  for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {  // uniform per block
    const int64_t tc = b % t.tiles_c;
    const int64_t tr = (b / t.tiles_c) % t.tiles_r;
    int64_t off[2];
    t.batch.offsets(b / (t.tiles_c * t.tiles_r), off);
    const int64_t r0 = tr * kTile, c0 = tc * kTile;
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + threadIdx.x, c = c0 + k;
      if (r < t.rows && c < t.cols) {
        tile[k * (kTile + 1) + threadIdx.x] = src[off[1] + r + c * t.src_col_stride];
      }
    }
    __syncthreads();
    for (int k = threadIdx.y; k < kTile; k += kTileRows) {
      const int64_t r = r0 + k, c = c0 + threadIdx.x;
      if (r < t.rows && c < t.cols) {
        dst[off[0] + r * t.dst_row_stride + c] = cast<D>(tile[threadIdx.x * (kTile + 1) + k]);
      }
    }
    __syncthreads();  // the tile is rewritten by the next iteration
  }
}

// The tile geometry when dst is dense in its innermost dim and src, strided there, is dense in
// another dim of at least a tile's width; false otherwise.
bool transpose_layout(const Strided<2>& g, TileGeom& t) {
  const int nd = g.ndim;
  if (nd < 2) return false;
  const int c = nd - 1;
  if (g.strides[0][c] != 1 || g.strides[1][c] <= 1) return false;
  int r = -1;
  for (int d = 0; d < c; ++d) {
    if (g.strides[1][d] == 1) r = d;
  }
  if (r < 0 || g.sizes[r] < kTile / 2 || g.sizes[c] < kTile / 2) return false;
  t.rows = g.sizes[r];
  t.cols = g.sizes[c];
  t.dst_row_stride = g.strides[0][r];
  t.src_col_stride = g.strides[1][c];
  t.tiles_r = (t.rows + kTile - 1) / kTile;
  t.tiles_c = (t.cols + kTile - 1) / kTile;
  t.batch.ndim = 0;
  for (int d = 0; d < c; ++d) {
    if (d == r) continue;
    const int k = t.batch.ndim++;
    t.batch.sizes[k] = g.sizes[d];
    t.batch.strides[0][k] = g.strides[0][d];
    t.batch.strides[1][k] = g.strides[1][d];
    t.batches *= g.sizes[d];
  }
  return true;
}

template <class D, class S>
cudaError_t copy_as(void* dst, const void* src, const Strided<2>& g, int64_t n,
                    cudaStream_t stream) {
  TileGeom t;
  if (transpose_layout(g, t)) {
    const int64_t limit = elementwise_grid_limit();
    const int64_t tiles = t.tiles_r * t.tiles_c * t.batches;
    const int64_t blocks = std::min<int64_t>(tiles, limit > 0 ? limit : kMaxBlocks);
    simt::launch(transpose_copy_kernel<D, S>, dim3(static_cast<unsigned>(blocks)),
                 dim3(kTile, kTileRows), sizeof(S) * kTile * (kTile + 1), stream,
                 static_cast<D*>(dst), static_cast<const S*>(src), t);
    return cudaGetLastError();
  }
  const void* ins[1] = {src};
  return launch_elementwise<D, S>(CastFn<D, S>{}, g, n, stream, dst, ins);
}

// Calls fn with a value of the unsigned type of elem_size bytes: data movement needs no dtype.
template <class Fn>
cudaError_t by_element_size(size_t elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    case 4:
      return fn(uint32_t{});
    case 8:
      return fn(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t copy(DType dst_dtype, DType src_dtype, void* dst, const void* src, const Strided<2>& g,
                 int64_t n, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (dst_dtype == src_dtype) {
    return by_element_size(element_size(dst_dtype), [&](auto tag) {
      using U = decltype(tag);
      return copy_as<U, U>(dst, src, g, n, stream);
    });
  }
  return visit_dtype(dst_dtype, [&](auto dt) {
    using D = typename decltype(dt)::type;
    return visit_dtype(src_dtype, [&](auto st) {
      using S = typename decltype(st)::type;
      return copy_as<D, S>(dst, src, g, n, stream);
    });
  });
}

cudaError_t fill(void* dst, uint64_t pattern, int elem_size, const Strided<1>& g, int64_t n,
                 cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_element_size(static_cast<size_t>(elem_size), [&](auto tag) {
    using U = decltype(tag);
    U value;
    std::memcpy(&value, &pattern, sizeof(U));  // little-endian: the low bytes hold the value
    return launch_elementwise<U>(ConstFn<U>{value}, g, n, stream, dst, nullptr);
  });
}

}  // namespace ember::cuda_kernels
