// Launchers for the data-movement kernels (copy_kernels.cu). Plain types only, so the header
// compiles under nvcc and as C++ against the emulator; element types are handled by size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"

namespace ember::cuda_kernels {

// dst[i] = src[i] for the n elements of the geometry (operand 0 dst, 1 src), each elem_size
// (1, 2, 4 or 8) bytes.
cudaError_t strided_copy(void* dst, const void* src, int elem_size, int64_t n,
                         const Strided<2>& layout, cudaStream_t stream);
// dst[i] = the elem_size low bytes of pattern, at the geometry's operand-0 strides.
cudaError_t strided_fill(void* dst, uint64_t pattern, int elem_size, int64_t n,
                         const Strided<1>& layout, cudaStream_t stream);

}  // namespace ember::cuda_kernels
