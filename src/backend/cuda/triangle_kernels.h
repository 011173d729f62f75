// Launcher for the tril/triu kernel (triangle_kernels.cu), by element size (dtype-agnostic).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"

namespace ember::cuda_kernels {

// out = in with the elements outside the band zeroed: kept when col - row >= k (upper) or
// col - row <= k (lower). Matrices are (rows, cols) with strides rs/cs per operand (0 out, 1 in);
// the batch dims are the geometry.
struct TriangleGeometry {
  Strided<2> batch;
  int64_t batches = 1, rows = 0, cols = 0;
  int64_t rs[2] = {0, 0}, cs[2] = {0, 0};
};
cudaError_t tril_triu(void* out, const void* in, int elem_size, const TriangleGeometry& g,
                      int64_t k, bool upper, cudaStream_t stream);

}  // namespace ember::cuda_kernels
