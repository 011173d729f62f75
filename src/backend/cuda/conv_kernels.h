// Launchers for the convolution and pooling kernels (conv_kernels.cu): contiguous
// (planes, H, W) images, dtype chosen at run time.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/window.h"

namespace ember::cuda_kernels {

// col (planes, kh*kw, out_h*out_w) from in; any element size.
cudaError_t im2col(void* col, const void* in, int elem_size, const Window2d& g,
                   cudaStream_t stream);
// in (planes, H, W) = sum of the col entries of each element (floating dtypes).
cudaError_t col2im(DType dtype, void* in, const void* col, const Window2d& g, cudaStream_t stream);
cudaError_t max_pool2d(DType dtype, void* out, int64_t* indices, const void* in, const Window2d& g,
                       cudaStream_t stream);
cudaError_t max_pool2d_backward(DType dtype, void* grad_in, const void* grad_out,
                                const int64_t* indices, const Window2d& g, cudaStream_t stream);
cudaError_t avg_pool2d(DType dtype, void* out, const void* in, const Window2d& g,
                       const AvgPool2dParams& p, cudaStream_t stream);
cudaError_t avg_pool2d_backward(DType dtype, void* grad_in, const void* grad_out, const Window2d& g,
                                const AvgPool2dParams& p, cudaStream_t stream);

}  // namespace ember::cuda_kernels
