// The CUDA backend's element-wise entries: tensors to pointers and merged geometry, then the
// launchers of elementwise.cu on the device's current stream.
#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/elementwise.h"

namespace ember {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_detail::strided_of;

void CudaBackend::unary(UnaryOp op, const Tensor& out, const Tensor& in,
                        const ElementwiseParams& p) {
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor* ops[2] = {&out, &in};
  const auto r = cuda_kernels::unary(op, in.dtype(), out.data_ptr(), in.data_ptr(),
                                     strided_of(ops, "unary"), out.numel(), p, current_stream());
  if (!r.supported) missing("unary");
  EMBER_CUDA_CHECK(r.err);
}

void CudaBackend::binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                         const ElementwiseParams& p) {
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor* ops[3] = {&out, &a, &b};
  const auto r = cuda_kernels::binary(op, a.dtype(), out.data_ptr(), a.data_ptr(), b.data_ptr(),
                                      strided_of(ops, "binary"), out.numel(), p, current_stream());
  if (!r.supported) missing("binary");
  EMBER_CUDA_CHECK(r.err);
}

void CudaBackend::ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
                          const Tensor& c, const ElementwiseParams& p) {
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor* ops[4] = {&out, &a, &b, &c};
  const auto r =
      cuda_kernels::ternary(op, a.dtype(), out.data_ptr(), a.data_ptr(), b.data_ptr(), c.data_ptr(),
                            strided_of(ops, "ternary"), out.numel(), p, current_stream());
  if (!r.supported) missing("ternary");
  EMBER_CUDA_CHECK(r.err);
}

void CudaBackend::where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor* ops[4] = {&out, &cond, &a, &b};
  EMBER_CUDA_CHECK(cuda_kernels::where(a.dtype(), out.data_ptr(), cond.data_ptr(), a.data_ptr(),
                                       b.data_ptr(), strided_of(ops, "where"), out.numel(),
                                       current_stream()));
}

}  // namespace ember
