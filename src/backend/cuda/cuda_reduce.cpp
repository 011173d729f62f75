// The CUDA backend's reductions, max/min with indices, scans and softmax: argument checks as the
// CPU backend makes them, the (outputs x reduced) layout, the plan and its workspace; the kernels
// are in reduce_*.cu, arg_reduce.cu, scan_kernels.cu and softmax_kernels.cu.
#include <algorithm>
#include <string>

#include "backend/cuda/cuda_backend.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/cuda_stream.h"
#include "backend/cuda/cuda_tensor.h"
#include "backend/cuda/reduce_kernels.h"
#include "ember/cuda.h"

namespace ember {

namespace {

using cuda_detail::current_stream;
using cuda_detail::device_index;
using cuda_kernels::ReduceLayout;

// Dims with out.size == 1 (and in.size != 1) are reduced; with only_dim >= 0 only that one is.
// Size-1 dims are dropped, dims are ordered by input stride (outer to inner) and dims that walk
// memory as one are merged, so the innermost kept or reduced dim is the contiguous one.
ReduceLayout make_layout(const char* op, const Tensor& out, const Tensor& in,
                         int64_t only_dim = -1) {
  const int64_t nd = in.dim();
  if (nd > cuda_kernels::kMaxDims) {
    throw NotImplementedError(std::string("[") + op + "] CUDA tensors with more than " +
                              std::to_string(cuda_kernels::kMaxDims) + " dims are not supported");
  }
  struct D {
    int64_t size, sin, sout;
    bool red;
  };
  D d[cuda_kernels::kMaxDims];
  int m = 0;
  for (int64_t i = 0; i < nd; ++i) {
    if (in.size(i) == 1) continue;
    const bool red = only_dim >= 0 ? i == only_dim : out.size(i) == 1;
    d[m++] = {in.size(i), in.stride(i), red ? 0 : out.stride(i), red};
  }
  // Broadcast (stride 0) dims go outermost so the smallest real stride ends up innermost.
  auto key = [](const D& x) { return x.sin == 0 ? INT64_MAX : x.sin; };
  std::stable_sort(d, d + m, [&](const D& a, const D& b) { return key(a) > key(b); });
  ReduceLayout l;
  l.n_out = l.n_red = 1;
  for (int i = 0; i < m; ++i) {
    const D& x = d[i];
    if (x.red) {
      if (l.nr > 0 && l.rin[l.nr - 1] == x.sin * x.size) {
        l.rs[l.nr - 1] *= x.size;
        l.rin[l.nr - 1] = x.sin;
      } else {
        l.rs[l.nr] = x.size;
        l.rin[l.nr++] = x.sin;
      }
      l.n_red *= x.size;
    } else {
      if (l.nk > 0 && l.kin[l.nk - 1] == x.sin * x.size && l.kout[l.nk - 1] == x.sout * x.size) {
        l.ks[l.nk - 1] *= x.size;
        l.kin[l.nk - 1] = x.sin;
        l.kout[l.nk - 1] = x.sout;
      } else {
        l.ks[l.nk] = x.size;
        l.kin[l.nk] = x.sin;
        l.kout[l.nk++] = x.sout;
      }
      l.n_out *= x.size;
    }
  }
  if (l.nr == 0) {  // nothing to fold: one element per output
    l.rs[0] = 1;
    l.rin[0] = 0;
    l.nr = 1;
  }
  return l;
}

// (outer, n, inner) of a contiguous tensor around dim (a 0-dim tensor is one row of one).
struct Split {
  int64_t outer = 1, n = 1, inner = 1;
};
Split split_at(const Tensor& t, int64_t dim) {
  Split s;
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i < dim) s.outer *= t.size(i);
    else if (i == dim) s.n = t.size(i);
    else s.inner *= t.size(i);
  }
  return s;
}

// Scratch device memory from the caching allocator, released (stream-ordered) when it goes out of
// scope after the kernels that use it were queued.
DataPtr workspace(const Tensor& like, size_t bytes) {
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, like.device());
  return cuda_backend().allocator(like.device(), false).allocate(bytes);
}

Tensor with_reduced_dim(const Tensor& t, const Tensor& in, int64_t dim) {
  if (t.dim() == in.dim()) return t;
  return t.unsqueeze(dim);
}

}  // namespace

void CudaBackend::reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) {
  if (out.numel() == 0) return;
  if (out.dim() != in.dim()) {
    throw Error("[reduce] output rank " + std::to_string(out.dim()) + " differs from input rank " +
                std::to_string(in.dim()));
  }
  const bool logical = op == ReduceOp::Any || op == ReduceOp::All;
  const bool widen = (op == ReduceOp::Sum || op == ReduceOp::Prod) && out.dtype() == kInt64 &&
                     is_integral(in.dtype(), true);
  if (logical ? (out.dtype() != kBool && out.dtype() != kUInt8)
              : (out.dtype() != in.dtype() && !widen)) {
    throw Error("[reduce] unexpected output dtype " + std::string(dtype_name(out.dtype())) +
                " for input dtype " + std::string(dtype_name(in.dtype())));
  }
  if (reduce_float_only(op) && !is_floating_point(in.dtype())) missing("reduce");
  if (in.device() != out.device()) {
    throw Error("[reduce] input on " + in.device().str() + " but output on " +
                out.device().str());
  }
  cuda::DeviceGuard guard(device_index(out.device()));
  const ReduceLayout l = make_layout("reduce", out, in);
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

void CudaBackend::reduce_with_index(ReduceOp op, const Tensor& values_in,
                                    const Tensor& indices_in, const Tensor& in, int64_t dim) {
  if (op != ReduceOp::Max && op != ReduceOp::Min) missing("max/min");
  Tensor values = with_reduced_dim(values_in, in, dim);
  Tensor indices = with_reduced_dim(indices_in, in, dim);
  if (values.numel() == 0) return;
  if (in.dim() > 0 && in.size(dim) == 0) {
    throw IndexError("[max/min] cannot reduce over a zero-size dimension " + std::to_string(dim));
  }
  cuda::DeviceGuard guard(device_index(in.device()));
  // The kernel writes values and indices at the same offsets; route odd layouts through temps.
  const bool direct = values.strides() == indices.strides() && indices.dtype() == kInt64 &&
                      values.dtype() == in.dtype();
  const TensorOptions opts = TensorOptions().device(in.device());
  Tensor v = direct ? values : empty(values.sizes(), TensorOptions(opts).dtype(in.dtype()));
  Tensor ix = direct ? indices : empty(values.sizes(), TensorOptions(opts).dtype(kInt64));
  const ReduceLayout l = make_layout("max/min", v, in, in.dim() > 0 ? dim : -1);
  const cuda_kernels::ReducePlan plan = cuda_kernels::plan_reduce(l);
  DataPtr ws = workspace(in, cuda_kernels::reduce_workspace_bytes(l, plan));
  EMBER_CUDA_CHECK(cuda_kernels::arg_reduce(op == ReduceOp::Max, in.dtype(), l, plan,
                                            in.data_ptr(), v.data_ptr(),
                                            static_cast<int64_t*>(ix.data_ptr()), ws.get(),
                                            current_stream()));
  if (!direct) {
    Tensor(values).copy_(v);
    Tensor(indices).copy_(ix);
  }
}

void CudaBackend::scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) {
  if (out.numel() == 0) return;
  cuda::DeviceGuard guard(device_index(out.device()));
  const Tensor x = in.dtype() == out.dtype() ? in.contiguous() : in.to(out.dtype()).contiguous();
  Tensor y = out.is_contiguous() ? out
                                 : empty(out.sizes(), TensorOptions(out.dtype()).device(out.device()));
  const Split s = split_at(x, dim);
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
  Tensor y = out.is_contiguous() ? out
                                 : empty(out.sizes(), TensorOptions(out.dtype()).device(out.device()));
  const Split s = split_at(x, dim);
  EMBER_CUDA_CHECK(cuda_kernels::softmax(log, out.dtype(), x.data_ptr(), y.data_ptr(), s.outer,
                                         s.n, s.inner, current_stream()));
  if (!y.is_same(out)) Tensor(out).copy_(y);
}

}  // namespace ember
