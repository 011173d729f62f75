// Tiled matmul for what cuBLASLt does not cover: integer dtypes, k == 0 (out = beta * out), and
// every product when cuBLASLt cannot be loaded.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include <type_traits>

#include "backend/cuda/gemm_kernels.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

constexpr int kTile = 16;
constexpr int64_t kMaxGridYZ = 65535;

// Integers accumulate in the unsigned type of the same width (defined wrap-around, as on the
// CPU); floating types in their compute type.
template <class T, bool = std::is_integral_v<T>>
struct acc_type {
  using type = compute_t<T>;
};
template <class T>
struct acc_type<T, true> {
  using type = std::make_unsigned_t<T>;
};
template <class T>
using acc_t = typename acc_type<T>::type;

// One kTile x kTile output tile per block (blockIdx.x: row tile, blockIdx.y: column tile), one
// element per thread with threadIdx.x along the columns; blockIdx.z walks the batch.
// Tiles of a and b go through shared memory so each global element is read once per tile.
template <class T>
__global__ void gemm_tiled_kernel(GemmMat out, GemmMat a, GemmMat b, int64_t batch, int64_t n,
                                  int64_t m, int64_t k, acc_t<T> alpha, acc_t<T> beta,
                                  bool read_out) {
  using Acc = acc_t<T>;
  __shared__ Acc tile_a[kTile][kTile + 1];
  __shared__ Acc tile_b[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kTile + ty;
  const int64_t col = static_cast<int64_t>(blockIdx.y) * kTile + tx;
  for (int64_t z = blockIdx.z; z < batch; z += gridDim.z) {
    const T* ap = static_cast<const T*>(a.data) + z * a.bs;
    const T* bp = static_cast<const T*>(b.data) + z * b.bs;
    Acc acc = Acc(0);
    for (int64_t p0 = 0; p0 < k; p0 += kTile) {
      // Thread (ty, tx) loads a[row][p0 + tx] and b[p0 + ty][col].
      const int64_t pa = p0 + tx, pb = p0 + ty;
      tile_a[ty][tx] = row < n && pa < k ? static_cast<Acc>(ap[row * a.rs + pa * a.cs]) : Acc(0);
      tile_b[ty][tx] = pb < k && col < m ? static_cast<Acc>(bp[pb * b.rs + col * b.cs]) : Acc(0);
      __syncthreads();
      for (int p = 0; p < kTile; ++p) acc = static_cast<Acc>(acc + tile_a[ty][p] * tile_b[p][tx]);
      __syncthreads();
    }
    if (row < n && col < m) {
      T* o = static_cast<T*>(out.data) + z * out.bs + row * out.rs + col * out.cs;
      Acc v = static_cast<Acc>(alpha * acc);
      if (read_out) v = static_cast<Acc>(v + beta * static_cast<Acc>(*o));
      *o = cast<T>(v);
    }
  }
}

// alpha and beta as the accumulator type: integers through int64, so -3 wraps as on the CPU.
template <class Acc>
Acc scalar_as(double v) {
  if constexpr (std::is_integral_v<Acc>) {
    return static_cast<Acc>(static_cast<int64_t>(v));
  } else {
    return static_cast<Acc>(v);
  }
}

}  // namespace

cudaError_t gemm_tiled(DType dtype, GemmMat out, GemmMat a, GemmMat b, int64_t batch, int64_t n,
                       int64_t m, int64_t k, double alpha, double beta, cudaStream_t stream) {
  if (batch <= 0 || n <= 0 || m <= 0) return cudaSuccess;
  const dim3 block(kTile, kTile);
  const int64_t gx = (n + kTile - 1) / kTile, gy = (m + kTile - 1) / kTile;
  if (gx >= (int64_t{1} << 31) || gy > kMaxGridYZ) return cudaErrorInvalidValue;
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                  static_cast<unsigned>(batch < kMaxGridYZ ? batch : kMaxGridYZ));
  return visit_dtype(dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      return cudaErrorInvalidValue;
    } else {
      using Acc = acc_t<T>;
      simt::launch(gemm_tiled_kernel<T>, grid, block, 0, stream, out, a, b, batch, n, m, k,
                   scalar_as<Acc>(alpha), scalar_as<Acc>(beta), beta != 0.0);
      return cudaGetLastError();
    }
  });
}

}  // namespace ember::cuda_kernels
