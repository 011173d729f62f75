// CUDA fused attention: device selection, scratch and launch; kernels in attention_kernels.cu.
#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "ember/cuda.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;

void CudaBackend::attention_forward(const Tensor& out, const Tensor& lse, const Tensor& q,
                                    const Tensor& k, const Tensor& v, const Tensor& mask,
                                    const AttentionParams& p) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(q.device()));
  EMBER_CUDA_CHECK(cuda_kernels::attention_forward(
      q.dtype(), out.data_ptr(), lse.data_ptr(), q.data_ptr(), k.data_ptr(), v.data_ptr(),
      p.has_mask ? mask.data_ptr() : nullptr, p, current_stream()));
}

void CudaBackend::attention_backward(const Tensor& dq, const Tensor& dk, const Tensor& dv,
                                     const Tensor& dout, const Tensor& q, const Tensor& k,
                                     const Tensor& v, const Tensor& out, const Tensor& lse,
                                     const Tensor& mask, const AttentionParams& p) {
  const int device = device_index(q.device());
  cuda::DeviceGuard guard(device);
  // D = rowsum(dout * out), written by the dQ kernel and read by the dK/dV kernel.
  const Tensor dd = make_empty({p.batch * p.l}, TensorOptions(lse.dtype()).device(q.device()));
  EMBER_CUDA_CHECK(cuda_kernels::attention_backward(
      q.dtype(), dq.data_ptr(), dk.data_ptr(), dv.data_ptr(), dd.data_ptr(), dout.data_ptr(),
      q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(),
      p.has_mask ? mask.data_ptr() : nullptr, p, current_stream()));
}

}  // namespace ember
