// Launchers for the CUDA random kernels (random_kernels.cu). Each thread turns whole Philox blocks
// into elements exactly as the CPU does (kernels/random_ops.h), so a device tensor holds the same
// bits as a CPU tensor drawn with the same seed and offset, whatever its strides.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"
#include "ember/dtype.h"
#include "kernels/random_ops.h"

namespace ember::cuda_kernels {

// out (n elements of dtype at the geometry's operand-0 strides; contiguous: plain index) drawn by
// op.
cudaError_t random_fill(RandomOp op, DType dtype, void* out, int64_t n, const Strided<1>& layout,
                        bool contiguous, uint64_t seed, uint64_t offset, const RandomParams& p,
                        cudaStream_t stream, const uint64_t* philox_state = nullptr);

// out = (u < p) elementwise (operand 0 out, 1 p); sets *bad to 1 when some p is outside [0, 1].
cudaError_t bernoulli_tensor(DType out_dtype, DType p_dtype, void* out, const void* p, int64_t n,
                             const Strided<2>& layout, uint64_t seed, uint64_t offset, int* bad,
                             cudaStream_t stream, const uint64_t* philox_state = nullptr);

// state[0] = seed, state[1] = offset on the stream: a graph's replay writes the generator's
// state here before launching, and its captured random kernels read it.
cudaError_t set_philox_state(uint64_t* state, uint64_t seed, uint64_t offset, cudaStream_t stream);

}  // namespace ember::cuda_kernels
