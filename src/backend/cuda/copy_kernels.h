// Launchers for the data-movement kernels (copy_kernels.cu). Plain types only, so the header
// compiles under nvcc and as C++ against the emulator; element types are handled by size.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace ember::cuda_kernels {

inline constexpr int kMaxDims = 16;

// The shape both operands share and their strides, in elements.
struct StridedLayout {
  int ndim = 0;
  int64_t sizes[kMaxDims];
  int64_t dst_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
};

// dst[i] = src[i] for the n elements of layout, each elem_size (1, 2, 4 or 8) bytes.
cudaError_t strided_copy(void* dst, const void* src, int elem_size, int64_t n,
                         const StridedLayout& layout, cudaStream_t stream);
// dst[i] = the elem_size low bytes of pattern, at layout's dst strides.
cudaError_t strided_fill(void* dst, uint64_t pattern, int elem_size, int64_t n,
                         const StridedLayout& layout, cudaStream_t stream);

}  // namespace ember::cuda_kernels
