// Launchers for the CUDA matmul kernels that cuBLASLt does not cover (gemm_kernels.cu): integer
// products, and k == 0 for every dtype. Plain types only, so the header compiles under nvcc and
// as C++ against the emulator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cuda_kernels {

// One operand of a batched product, (batch, rows, cols) with strides in elements.
struct GemmMat {
  void* data = nullptr;
  int64_t bs = 0, rs = 0, cs = 0;
};

// out (batch, n, m) = alpha * a (batch, n, k) @ b (batch, k, m) + beta * out, by shared-memory
// tiles. Integers accumulate in the unsigned type of their width (wrapping like the CPU), the
// 16-bit floats in float. beta == 0 means out is not read.
cudaError_t gemm_tiled(DType dtype, GemmMat out, GemmMat a, GemmMat b, int64_t batch, int64_t n,
                       int64_t m, int64_t k, double alpha, double beta, cudaStream_t stream);

}  // namespace ember::cuda_kernels
