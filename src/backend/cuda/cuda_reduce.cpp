// The CUDA backend's reductions, max/min with indices, scans and softmax: the argument checks
// both backends make (backend/reduce_checks.h), the (outputs x reduced) layout, the plan and its
// workspace; the kernels are in reduce_*.cu, arg_reduce.cu, scan_kernels.cu and softmax_kernels.cu.
#include <algorithm>
#include <string>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/reduce_kernels.h"
#include "backend/geometry.h"
#include "backend/reduce_checks.h"
#include "ember/cuda.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;

// Scratch device memory from the caching allocator, released (stream-ordered) when it goes out of
// scope after the kernels that use it were queued.
DataPtr workspace(const Tensor& like, size_t bytes) {
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, like.device());
  return cuda_backend().allocator(like.device(), false).allocate(bytes);
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) {
  if (out.numel() == 0) return;
  check_reduce_operands(op, out, in);
  if (reduce_float_only(op) && !is_floating_point(in.dtype())) missing("reduce");
  if (in.device() != out.device()) {
    throw Error("[reduce] input on " + in.device().str() + " but output on " + out.device().str());
  }
  cuda::DeviceGuard guard(device_index(out.device()));
  const ReduceLayout l = make_reduce_layout("reduce", out, in);
  const cuda_kernels::ReducePlan plan = cuda_kernels::plan_reduce(l);
  DataPtr ws = workspace(out, cuda_kernels::reduce_workspace_bytes(l, plan));
  cudaStream_t stream = current_stream();
  if (reduce_float_only(op)) {
    EMBER_CUDA_CHECK(cuda_kernels::reduce_stats(op, in.dtype(), p, l, plan, in.data_ptr(),
                                                out.data_ptr(), ws.get(), stream));
  } else {
    EMBER_CUDA_CHECK(cuda_kernels::reduce_basic(op, in.dtype(), out.dtype(), p, l, plan,
                                                in.data_ptr(), out.data_ptr(), ws.get(), stream));
  }
}

void CudaBackend::reduce_with_index(ReduceOp op, const Tensor& values_in, const Tensor& indices_in,
                                    const Tensor& in, int64_t dim) {
  if (op != ReduceOp::Max && op != ReduceOp::Min) missing("max/min");
  Tensor values = with_reduced_dim(values_in, in, dim);
  Tensor indices = with_reduced_dim(indices_in, in, dim);
  if (values.numel() == 0) return;
  check_reduced_dim_not_empty(in, dim);
  cuda::DeviceGuard guard(device_index(in.device()));
  // The kernel writes values and indices at the same offsets; route odd layouts through temps.
  const bool direct = values.strides() == indices.strides() && indices.dtype() == kInt64 &&
                      values.dtype() == in.dtype();
  const TensorOptions opts = TensorOptions().device(in.device());
  Tensor v = direct ? values : make_empty(values.sizes(), TensorOptions(opts).dtype(in.dtype()));
  Tensor ix = direct ? indices : make_empty(values.sizes(), TensorOptions(opts).dtype(kInt64));
  const ReduceLayout l = make_reduce_layout("max/min", v, in, in.dim() > 0 ? dim : -1);
  const cuda_kernels::ReducePlan plan = cuda_kernels::plan_reduce(l);
  DataPtr ws = workspace(in, cuda_kernels::reduce_workspace_bytes(l, plan));
  EMBER_CUDA_CHECK(cuda_kernels::arg_reduce(op == ReduceOp::Max, in.dtype(), l, plan, in.data_ptr(),
                                            v.data_ptr(), static_cast<int64_t*>(ix.data_ptr()),
                                            ws.get(), current_stream()));
  if (!direct) {
    Tensor(values).copy_(v);
    Tensor(indices).copy_(ix);
  }
}

void CudaBackend::scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor x = in.dtype() == out.dtype() ? in.contiguous() : in.to(out.dtype()).contiguous();
  Tensor y = out.is_contiguous()
                 ? out
                 : make_empty(out.sizes(), TensorOptions(out.dtype()).device(out.device()));
  const DimSplit s = split_at_dim(x.sizes(), dim);
  EMBER_CUDA_CHECK(cuda_kernels::scan(op, out.dtype(), x.data_ptr(), y.data_ptr(), s.outer, s.n,
                                      s.inner, current_stream()));
  if (!y.is_same(out)) Tensor(out).copy_(y);
}

void CudaBackend::softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) {
  if (out.numel() == 0) return;
  const char* op = log ? "log_softmax" : "softmax";
  if (!is_floating_point(out.dtype())) {
    throw TypeError(std::string("[") + op + "] not implemented for dtype " +
                    std::string(dtype_name(out.dtype())));
  }
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor x = in.dtype() == out.dtype() ? in.contiguous() : in.to(out.dtype()).contiguous();
  Tensor y = out.is_contiguous()
                 ? out
                 : make_empty(out.sizes(), TensorOptions(out.dtype()).device(out.device()));
  const DimSplit s = split_at_dim(x.sizes(), dim);
  EMBER_CUDA_CHECK(cuda_kernels::softmax(log, out.dtype(), x.data_ptr(), y.data_ptr(), s.outer, s.n,
                                         s.inner, current_stream()));
  if (!y.is_same(out)) Tensor(out).copy_(y);
}

}  // namespace ember
