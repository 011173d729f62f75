// The CUDA backend's fused softmax cross-entropy: operand checks on the host, kernels in
// loss_kernels.cu. Targets stay on the device: the forward kernels record the first one out of
// range, which the host reads back with one copy after the launch.
#include <string>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/loss_kernels.h"
#include "ember/cuda.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;

cuda_kernels::CrossEntropyArgs ce_args(const Tensor& input, const Tensor& target,
                                       const Tensor& weight, const Tensor& weight_sum,
                                       const CrossEntropyParams& p) {
  cuda_kernels::CrossEntropyArgs a;
  a.input = input.data_ptr();
  a.target = static_cast<const int64_t*>(target.data_ptr());
  a.weight = weight.defined() ? weight.data_ptr() : nullptr;
  a.weight_sum = weight_sum.defined() ? weight_sum.data_ptr() : nullptr;
  a.rows = input.size(0);
  a.classes = input.size(1);
  a.ignore_index = p.ignore_index;
  a.label_smoothing = p.label_smoothing;
  a.from_logits = p.from_logits;
  return a;
}

}  // namespace

void CudaBackend::cross_entropy(const Tensor& loss, const Tensor& row_weight, const Tensor& lse,
                                const Tensor& input, const Tensor& target, const Tensor& weight,
                                const Tensor& weight_sum, const CrossEntropyParams& p) {
  if (input.size(0) == 0) return;
  const int device = device_index(input.device());
  cuda::DeviceGuard guard(device);
  cudaStream_t stream = current_stream();
  Tensor fault = make_empty({2}, TensorOptions().dtype(kInt64).device(input.device()));
  static_assert(sizeof(cuda_kernels::LossFault) == 2 * sizeof(int64_t));
  EMBER_CUDA_CHECK(cudaMemsetAsync(fault.data_ptr(), 0, sizeof(cuda_kernels::LossFault), stream));
  EMBER_CUDA_CHECK(cuda_kernels::cross_entropy_forward(
      input.dtype(), ce_args(input, target, weight, weight_sum, p), loss.data_ptr(),
      row_weight.data_ptr(), lse.data_ptr(),
      static_cast<cuda_kernels::LossFault*>(fault.data_ptr()), stream));
  // Inside a graph capture the host cannot wait: targets are checked only in eager calls.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (stream != nullptr) EMBER_CUDA_CHECK(cudaStreamIsCapturing(stream, &capturing));
  if (capturing != cudaStreamCaptureStatusNone) return;
  cuda_kernels::LossFault f{};
  EMBER_CUDA_CHECK(cudaMemcpyAsync(&f, fault.data_ptr(), sizeof f, cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (f.hit) {
    throw IndexError(std::string("[") + p.op + "] Target " + std::to_string(f.value) +
                     " is out of bounds.");
  }
}

void CudaBackend::cross_entropy_backward(const Tensor& grad_input, const Tensor& grad_rows,
                                         const Tensor& input, const Tensor& lse,
                                         const Tensor& target, const Tensor& weight,
                                         const Tensor& weight_sum, const CrossEntropyParams& p) {
  if (input.size(0) == 0 || input.size(1) == 0) return;
  cuda::DeviceGuard guard(device_index(input.device()));
  EMBER_CUDA_CHECK(cuda_kernels::cross_entropy_backward(
      input.dtype(), ce_args(input, target, weight, weight_sum, p), grad_input.data_ptr(),
      grad_rows.data_ptr(), grad_rows.stride(0), lse.data_ptr(), current_stream()));
}

}  // namespace ember
