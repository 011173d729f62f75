// CUDA normalisation and dropout: device selection and launch; kernels in norm_kernels.cu.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/norm_kernels.h"
#include "ember/cuda.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;

namespace {

void* data_or_null(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

}  // namespace

void CudaBackend::norm_stats(const Tensor& mean, const Tensor& rstd, const Tensor& in,
                             const NormParams& p, const Tensor& running_mean,
                             const Tensor& running_var) {
  cuda::DeviceGuard guard(device_index(in.device()));
  EMBER_CUDA_CHECK(cuda_kernels::norm_stats(in.dtype(), in.data_ptr(), mean.data_ptr(),
                                            rstd.data_ptr(), data_or_null(running_mean),
                                            data_or_null(running_var), p, current_stream()));
}

void CudaBackend::norm_forward(const Tensor& out, const Tensor& in, const Tensor& mean,
                               const Tensor& rstd, const Tensor& weight, const Tensor& bias,
                               const NormParams& p) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(in.device()));
  EMBER_CUDA_CHECK(cuda_kernels::norm_forward(
      in.dtype(), out.data_ptr(), in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
      data_or_null(weight), data_or_null(bias), p, current_stream()));
}

void CudaBackend::norm_backward(const Tensor& grad_in, const Tensor& grad_weight,
                                const Tensor& grad_bias, const Tensor& grad_out, const Tensor& in,
                                const Tensor& mean, const Tensor& rstd, const Tensor& weight,
                                const NormParams& p) {
  const int device = device_index(in.device());
  cuda::DeviceGuard guard(device);
  // Per-channel (sum dy, sum dy * xhat) for batch norm's input gradient.
  Tensor sums;
  if (grad_in.defined() && p.per_channel && p.batch_stats) {
    sums = make_empty({2 * p.channels}, TensorOptions(mean.dtype()).device(Device(kCUDA, device)));
  }
  EMBER_CUDA_CHECK(cuda_kernels::norm_backward(
      in.dtype(), data_or_null(grad_in), data_or_null(grad_weight), data_or_null(grad_bias),
      data_or_null(sums), grad_out.data_ptr(), in.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
      data_or_null(weight), p, current_stream()));
}

void CudaBackend::dropout(const Tensor& out, const Tensor& mask, const Tensor& in, double p,
                          uint64_t seed, uint64_t offset) {
  if (out.numel() == 0) return;
  const int device = device_index(in.device());
  cuda::DeviceGuard guard(device);
  cudaStream_t stream = current_stream();
  const uint64_t* state = cuda_detail::capture_philox("dropout", device, stream, seed, offset);
  EMBER_CUDA_CHECK(cuda_kernels::dropout(in.dtype(), out.data_ptr(),
                                         static_cast<bool*>(mask.data_ptr()), in.data_ptr(),
                                         in.numel(), p, seed, offset, stream, state));
}

}  // namespace ember
