// tril / triu: one element per thread of a grid-stride loop over (batch, row, col), any strides.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include "backend/cuda/triangle_kernels.h"

namespace ember::cuda_kernels {

namespace {

template <class E>
__global__ void triangle_kernel(E* out, const E* in, TriangleGeometry g, int64_t k, bool upper) {
  const int64_t n = g.batches * g.rows * g.cols;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t c = i % g.cols, t = i / g.cols;
    const int64_t r = t % g.rows, bi = t / g.rows;
    int64_t off[2];
    g.batch.offsets(bi, off);
    const bool keep = upper ? c - r >= k : c - r <= k;
    out[off[0] + r * g.rs[0] + c * g.cs[0]] = keep ? in[off[1] + r * g.rs[1] + c * g.cs[1]] : E(0);
  }
}

}  // namespace

cudaError_t tril_triu(void* out, const void* in, int elem_size, const TriangleGeometry& g,
                      int64_t k, bool upper, cudaStream_t stream) {
  const int64_t n = g.batches * g.rows * g.cols;
  if (n <= 0) return cudaSuccess;
  auto launch = [&](auto tag) {
    using E = decltype(tag);
    simt::launch(triangle_kernel<E>, grid_for(n), dim3(kBlock), 0, stream, static_cast<E*>(out),
                 static_cast<const E*>(in), g, k, upper);
    return cudaGetLastError();
  };
  switch (elem_size) {
    case 1:
      return launch(uint8_t{});
    case 2:
      return launch(uint16_t{});
    case 4:
      return launch(uint32_t{});
    case 8:
      return launch(uint64_t{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace ember::cuda_kernels
