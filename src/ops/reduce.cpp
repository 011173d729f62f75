// Reductions and scans: argument checks, PyTorch's result dtypes and shapes, empty-input rules;
// the math lives in kernels/reduce_ops.h and the backends. Softmax is in softmax.cpp.
#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "core/record_scope.h"
#include "kernels/reduce_ops.h"
#include "ops/autocast.h"
#include "ops/op_utils.h"
#include "ops/reduce_grad.h"

namespace ember {

namespace {

std::string dname(DType t) { return std::string(dtype_name(t)); }

void check_defined(const char* op, const Tensor& x) {
  if (!x.defined()) throw ValueError(op_prefix(op) + "the input tensor is undefined");
}

// Which dims fold, the keepdim layout the backend writes, and the shape handed back.
struct Reduction {
  std::vector<int64_t> dims;  // wrapped and sorted; empty for a 0-dim input
  Shape keep;                 // the input's rank with size 1 on reduced dims
  Shape out;                  // keep without the reduced dims unless keepdim
  int64_t count = 1;          // elements folded into each output
};

Reduction plan_reduction(const char* op, const Tensor& x, const std::vector<int64_t>& dims,
                         bool keepdim) {
  Reduction r;
  r.dims = wrap_dims(op, dims, x.dim());
  std::vector<bool> red(static_cast<size_t>(x.dim()), false);
  for (int64_t d : r.dims) red[static_cast<size_t>(d)] = true;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (red[static_cast<size_t>(i)]) {
      r.keep.push_back(1);
      r.count *= x.size(i);
      if (keepdim) r.out.push_back(1);
    } else {
      r.keep.push_back(x.size(i));
      r.out.push_back(x.size(i));
    }
  }
  return r;
}

std::vector<int64_t> opt_dims(std::optional<int64_t> dim) {
  return dim ? std::vector<int64_t>{*dim} : std::vector<int64_t>{};
}

// Ops without an identity (max, amin, ...) reject folding an empty dim.
void check_nonempty_dims(const char* op, const Tensor& x, const Reduction& r) {
  for (int64_t d : r.dims) {
    if (x.size(d) == 0) {
      throw IndexError(op_prefix(op) + "Expected reduction dim " + std::to_string(d) +
                       " to have non-zero size (input shape " + shape_str(x) + ")");
    }
  }
}

// x is already in the dtype the kernel reads; out_dtype is the result's.
Tensor launch(const char* op, ReduceOp rop, const Tensor& x, const Reduction& r, DType out_dtype,
              bool keepdim, ReduceParams p = {}) {
  EMBER_RECORD_OP(op, &x);
  Tensor out = make_empty(r.keep, out_dtype, x.device(), false, op);
  if (out.numel() > 0) backend(x.device()).reduce(rop, out, x, p);
  return keepdim ? out : out.view(r.out);
}

void require_float(const char* op, const Tensor& x, const std::string& what) {
  if (!is_floating_point(x.dtype())) {
    throw TypeError(op_prefix(op) + what + " Got: " + dname(x.dtype()) + " (input shape " +
                    shape_str(x) + ")");
  }
}

// sum / prod: integers and bool widen to int64 inside the kernel; an explicit dtype converts the
// input first, as PyTorch does.
Tensor sum_like(const char* op, ReduceOp rop, const Tensor& x, const std::vector<int64_t>& dims,
                bool keepdim, std::optional<DType> dtype) {
  check_defined(op, x);
  const bool integral = is_integral(x.dtype(), true);
  const DType out_t = dtype ? *dtype : (integral ? kInt64 : x.dtype());
  const DType in_t = out_t == kInt64 && integral ? x.dtype() : out_t;
  Reduction r = plan_reduction(op, x, dims, keepdim);
  return launch(op, rop, to_operand(x, in_t, x.device()), r, out_t, keepdim);
}

std::tuple<Tensor, Tensor> extreme_dim(const char* op, ReduceOp rop, const Tensor& x, int64_t dim,
                                       bool keepdim) {
  check_defined(op, x);
  const int64_t d = wrap_dim(op, dim, x.dim());
  Shape keep = x.sizes(), out = x.sizes();
  if (x.dim() > 0) {
    if (x.size(d) == 0) {
      throw IndexError(op_prefix(op) + "Expected reduction dim " + std::to_string(d) +
                       " to have non-zero size (input shape " + shape_str(x) + ")");
    }
    keep[static_cast<size_t>(d)] = 1;
    if (!keepdim) out.erase(static_cast<size_t>(d));
  }
  Tensor values = make_empty(keep, x.dtype(), x.device(), false, op);
  Tensor indices = make_empty(keep, kInt64, x.device(), false, op);
  if (values.numel() > 0) backend(x.device()).reduce_with_index(rop, values, indices, x, d);
  if (keepdim) return {values, indices};
  return {values.view(out), indices.view(out)};
}

Tensor full_extreme(const char* op, ReduceOp rop, const Tensor& x) {
  check_defined(op, x);
  if (x.numel() == 0) {
    throw ValueError(op_prefix(op) +
                     "Expected reduction dim to be specified for input.numel() == 0. Specify the "
                     "reduction dim with the 'dim' argument (input shape " +
                     shape_str(x) + ")");
  }
  return launch(op, rop, x, plan_reduction(op, x, {}, false), x.dtype(), false);
}

Tensor amax_like(const char* op, ReduceOp rop, const Tensor& x, const std::vector<int64_t>& dims,
                 bool keepdim) {
  check_defined(op, x);
  Reduction r = plan_reduction(op, x, dims, keepdim);
  check_nonempty_dims(op, x, r);
  return launch(op, rop, x, r, x.dtype(), keepdim);
}

Tensor arg_extreme(const char* op, ReduceOp rop, const Tensor& x, std::optional<int64_t> dim,
                   bool keepdim) {
  check_defined(op, x);
  if (x.dtype() == kBool) {
    throw TypeError(op_prefix(op) + "not implemented for dtype bool (input shape " + shape_str(x) +
                    ")");
  }
  if (dim) return std::get<1>(extreme_dim(op, rop, x, *dim, keepdim));
  if (x.numel() == 0) {
    throw ValueError(op_prefix(op) +
                     "Expected reduction dim to be specified for input.numel() == 0 (input shape " +
                     shape_str(x) + ")");
  }
  // Over the flattened tensor: indices count in row-major order.
  Tensor idx = std::get<1>(extreme_dim(op, rop, x.reshape({x.numel()}), 0, false));
  return keepdim ? idx.view(Shape(static_cast<size_t>(x.dim()), 1)) : idx;
}

Tensor var_like(const char* op, ReduceOp rop, const Tensor& x, const std::vector<int64_t>& dims,
                int64_t correction, bool keepdim) {
  check_defined(op, x);
  require_float(op, x, "std and var only support floating point and complex dtypes.");
  ReduceParams p;
  p.correction = correction;
  return launch(op, rop, x, plan_reduction(op, x, dims, keepdim), x.dtype(), keepdim, p);
}

Tensor any_all(const char* op, ReduceOp rop, const Tensor& x, std::optional<int64_t> dim,
               bool keepdim) {
  check_defined(op, x);
  // PyTorch keeps uint8 results for uint8 inputs (its pre-bool convention); bool otherwise.
  const DType out_t = x.dtype() == kUInt8 ? kUInt8 : kBool;
  return launch(op, rop, x, plan_reduction(op, x, opt_dims(dim), keepdim), out_t, keepdim);
}

Tensor scan_op(const char* op, ScanOp sop, const Tensor& x, int64_t dim,
               std::optional<DType> dtype) {
  check_defined(op, x);
  const int64_t d = wrap_dim(op, dim, x.dim());
  const DType t = dtype ? *dtype : (is_integral(x.dtype(), true) ? kInt64 : x.dtype());
  Tensor out = make_empty(x.sizes(), t, x.device(), false, op);
  if (out.numel() > 0) backend(x.device()).scan(sop, out, to_operand(x, t, x.device()), d);
  return out;
}

}  // namespace

// ---- sums and products --------------------------------------------------------------------------

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
           std::optional<DType> dtype) {
  if (!dtype && autocast::active(autocast::Op::sum, x)) {
    autocast::Scope s(autocast::Op::sum, x, {x});
    return sum(s[0], dims, keepdim, dtype);
  }
  if (autograd::needs_grad({&x})) return grad_ops::sum(x, dims, keepdim, dtype);
  return sum_like("sum", ReduceOp::Sum, x, dims, keepdim, dtype);
}

Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  if (autocast::active(autocast::Op::prod, x)) {
    autocast::Scope s(autocast::Op::prod, x, {x});
    return prod(s[0], dim, keepdim);
  }
  if (autograd::needs_grad({&x})) return grad_ops::prod(x, dim, keepdim);
  return sum_like("prod", ReduceOp::Prod, x, opt_dims(dim), keepdim, std::nullopt);
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::mean(x, dims, keepdim);
  check_defined("mean", x);
  require_float("mean", x,
                "could not infer output dtype. Input dtype must be either a floating point or "
                "complex dtype.");
  return launch("mean", ReduceOp::Mean, x, plan_reduction("mean", x, dims, keepdim), x.dtype(),
                keepdim);
}

// ---- extremes -----------------------------------------------------------------------------------

Tensor max(const Tensor& x) {
  if (autograd::needs_grad({&x})) return grad_ops::amax(x, {}, false, true, "MaxBackward1");
  return full_extreme("max", ReduceOp::Max, x);
}
Tensor min(const Tensor& x) {
  if (autograd::needs_grad({&x})) return grad_ops::amax(x, {}, false, false, "MinBackward1");
  return full_extreme("min", ReduceOp::Min, x);
}

std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::max_dim(x, dim, keepdim, true);
  return extreme_dim("max", ReduceOp::Max, x, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::max_dim(x, dim, keepdim, false);
  return extreme_dim("min", ReduceOp::Min, x, dim, keepdim);
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::amax(x, dims, keepdim, true, "AmaxBackward0");
  return amax_like("amax", ReduceOp::Max, x, dims, keepdim);
}
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::amax(x, dims, keepdim, false, "AminBackward0");
  return amax_like("amin", ReduceOp::Min, x, dims, keepdim);
}

Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme("argmax", ReduceOp::Max, x, dim, keepdim);
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme("argmin", ReduceOp::Min, x, dim, keepdim);
}

// ---- statistics and norms -----------------------------------------------------------------------

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::var(x, dims, correction, keepdim, false);
  return var_like("var", ReduceOp::Var, x, dims, correction, keepdim);
}

Tensor std(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim) {
  if (autograd::needs_grad({&x})) return grad_ops::var(x, dims, correction, keepdim, true);
  return var_like("std", ReduceOp::Std, x, dims, correction, keepdim);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& x, const std::vector<int64_t>& dims,
                                    int64_t correction, bool keepdim) {
  if (autograd::needs_grad({&x})) {
    return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
  }
  Tensor v = var_like("var_mean", ReduceOp::Var, x, dims, correction, keepdim);
  Tensor m = launch("var_mean", ReduceOp::Mean, x, plan_reduction("var_mean", x, dims, keepdim),
                    x.dtype(), keepdim);
  return {v, m};
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  if (autocast::active(autocast::Op::norm, x)) {
    autocast::Scope s(autocast::Op::norm, x, {x});
    return norm(s[0], p, dims, keepdim);
  }
  if (autograd::needs_grad({&x})) return grad_ops::norm(x, p, dims, keepdim);
  check_defined("norm", x);
  require_float("norm", x, "input dtype should be either floating point or complex.");
  Reduction r = plan_reduction("norm", x, dims, keepdim);
  const double inf = std::numeric_limits<double>::infinity();
  if (p < 0 || p == inf) {  // max/min-like orders have no value for an empty reduction
    for (int64_t d : r.dims) {
      if (x.size(d) == 0) {
        throw ValueError("[norm] cannot compute the " + std::to_string(p) +
                         " norm on an empty tensor because the operation does not have an "
                         "identity (input shape " +
                         shape_str(x) + ")");
      }
    }
  }
  ReduceOp op = ReduceOp::NormP;
  if (p == 0)
    op = ReduceOp::Norm0;
  else if (p == 1)
    op = ReduceOp::Norm1;
  else if (p == 2)
    op = ReduceOp::Norm2;
  else if (p == inf)
    op = ReduceOp::NormInf;
  else if (p == -inf)
    op = ReduceOp::NormNegInf;
  ReduceParams prm;
  prm.p = p;
  return launch("norm", op, x, r, x.dtype(), keepdim, prm);
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (autocast::active(autocast::Op::logsumexp, x)) {
    autocast::Scope s(autocast::Op::logsumexp, x, {x});
    return logsumexp(s[0], dims, keepdim);
  }
  if (autograd::needs_grad({&x})) return grad_ops::logsumexp(x, dims, keepdim);
  check_defined("logsumexp", x);
  // Integers and bool compute in the default float dtype, as in PyTorch.
  const DType t = is_floating_point(x.dtype()) ? x.dtype() : default_dtype();
  return launch("logsumexp", ReduceOp::LogSumExp, to_operand(x, t, x.device()),
                plan_reduction("logsumexp", x, dims, keepdim), t, keepdim);
}

// ---- logical ------------------------------------------------------------------------------------

Tensor any(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return any_all("any", ReduceOp::Any, x, dim, keepdim);
}
Tensor all(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return any_all("all", ReduceOp::All, x, dim, keepdim);
}

// ---- scans --------------------------------------------------------------------------------------

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (!dtype && autocast::active(autocast::Op::cumsum, x)) {
    autocast::Scope s(autocast::Op::cumsum, x, {x});
    return cumsum(s[0], dim, dtype);
  }
  if (autograd::needs_grad({&x})) return grad_ops::cumsum(x, dim, dtype);
  return scan_op("cumsum", ScanOp::CumSum, x, dim, dtype);
}
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  if (!dtype && autocast::active(autocast::Op::cumprod, x)) {
    autocast::Scope s(autocast::Op::cumprod, x, {x});
    return cumprod(s[0], dim, dtype);
  }
  if (autograd::needs_grad({&x})) return grad_ops::cumprod(x, dim, dtype);
  return scan_op("cumprod", ScanOp::CumProd, x, dim, dtype);
}

// ---- Tensor members -----------------------------------------------------------------------------

Tensor Tensor::sum(const std::vector<int64_t>& dims, bool keepdim,
                   std::optional<DType> dtype) const {
  return ember::sum(*this, dims, keepdim, dtype);
}
Tensor Tensor::mean(const std::vector<int64_t>& dims, bool keepdim) const {
  return ember::mean(*this, dims, keepdim);
}
Tensor Tensor::prod(std::optional<int64_t> dim, bool keepdim) const {
  return ember::prod(*this, dim, keepdim);
}
Tensor Tensor::max() const { return ember::max(*this); }
Tensor Tensor::min() const { return ember::min(*this); }
std::tuple<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return ember::max(*this, dim, keepdim);
}
std::tuple<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return ember::min(*this, dim, keepdim);
}
Tensor Tensor::amax(const std::vector<int64_t>& dims, bool keepdim) const {
  return ember::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(const std::vector<int64_t>& dims, bool keepdim) const {
  return ember::amin(*this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return ember::argmin(*this, dim, keepdim);
}
Tensor Tensor::var(const std::vector<int64_t>& dims, int64_t correction, bool keepdim) const {
  return ember::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(const std::vector<int64_t>& dims, int64_t correction, bool keepdim) const {
  return ember::std(*this, dims, correction, keepdim);
}
Tensor Tensor::norm(double p, const std::vector<int64_t>& dims, bool keepdim) const {
  return ember::norm(*this, p, dims, keepdim);
}
Tensor Tensor::logsumexp(const std::vector<int64_t>& dims, bool keepdim) const {
  return ember::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::any(std::optional<int64_t> dim, bool keepdim) const {
  return ember::any(*this, dim, keepdim);
}
Tensor Tensor::all(std::optional<int64_t> dim, bool keepdim) const {
  return ember::all(*this, dim, keepdim);
}
Tensor Tensor::cumsum(int64_t dim) const { return ember::cumsum(*this, dim); }
Tensor Tensor::cumprod(int64_t dim) const { return ember::cumprod(*this, dim); }

}  // namespace ember
