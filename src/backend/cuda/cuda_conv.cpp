// The CUDA backend's convolution and pooling entries: the op layer hands over contiguous images;
// these check the dtype and launch the kernels of conv_kernels.cu on the current stream.
#include <string>

#include "backend/cuda/conv_kernels.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;

void CudaBackend::im2col(const Tensor& col, const Tensor& in, const Window2d& g) {
  if (col.numel() == 0) return;
  if (!is_floating_point(in.dtype())) {
    throw TypeError("[im2col] not implemented for dtype " + std::string(dtype_name(in.dtype())));
  }
  cuda::DeviceGuard guard(device_index(col.device()));
  EMBER_CUDA_CHECK(cuda_kernels::im2col(col.data_ptr(), in.data_ptr(),
                                        static_cast<int>(in.element_size()), g, current_stream()));
}

void CudaBackend::col2im(const Tensor& in, const Tensor& col, const Window2d& g) {
  if (in.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(in.device()));
  EMBER_CUDA_CHECK(
      cuda_kernels::col2im(in.dtype(), in.data_ptr(), col.data_ptr(), g, current_stream()));
}

void CudaBackend::max_pool2d(const Tensor& out, const Tensor& indices, const Tensor& in,
                             const Window2d& g) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  EMBER_CUDA_CHECK(cuda_kernels::max_pool2d(out.dtype(), out.data_ptr(),
                                            indices.data_ptr<int64_t>(), in.data_ptr(), g,
                                            current_stream()));
}

void CudaBackend::max_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out,
                                      const Tensor& indices, const Window2d& g) {
  if (grad_in.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(grad_in.device()));
  EMBER_CUDA_CHECK(
      cuda_kernels::max_pool2d_backward(grad_in.dtype(), grad_in.data_ptr(), grad_out.data_ptr(),
                                        indices.data_ptr<int64_t>(), g, current_stream()));
}

void CudaBackend::avg_pool2d(const Tensor& out, const Tensor& in, const Window2d& g,
                             const AvgPool2dParams& p) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  EMBER_CUDA_CHECK(
      cuda_kernels::avg_pool2d(out.dtype(), out.data_ptr(), in.data_ptr(), g, p, current_stream()));
}

void CudaBackend::avg_pool2d_backward(const Tensor& grad_in, const Tensor& grad_out,
                                      const Window2d& g, const AvgPool2dParams& p) {
  if (grad_in.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(grad_in.device()));
  EMBER_CUDA_CHECK(cuda_kernels::avg_pool2d_backward(grad_in.dtype(), grad_in.data_ptr(),
                                                     grad_out.data_ptr(), g, p, current_stream()));
}

}  // namespace ember
