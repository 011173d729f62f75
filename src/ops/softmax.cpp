// softmax and log_softmax: dtype handling and dim checks; the fused kernel is per backend.
#include "autograd/function.h"
#include "core/record_scope.h"
#include "ops/autocast.h"
#include "ops/op_utils.h"
#include "ops/reduce_grad.h"

namespace ember {

namespace {

Tensor softmax_op(const char* op, const Tensor& x, int64_t dim, std::optional<DType> dtype,
                  bool log) {
  if (!x.defined()) throw ValueError(op_prefix(op) + "the input tensor is undefined");
  const int64_t d = wrap_dim(op, dim, x.dim());
  // An explicit dtype converts the input first (how integer inputs get a softmax at all).
  const DType t = dtype ? *dtype : x.dtype();
  if (!is_floating_point(t)) {
    throw TypeError(op_prefix(op) + "not implemented for dtype " + std::string(dtype_name(t)) +
                    " (input shape " + shape_str(x) + ")");
  }
  Tensor out = make_empty(x.sizes(), t, x.device(), false, op);
  if (out.numel() > 0) backend(x.device()).softmax(out, to_operand(x, t, x.device()), d, log);
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_RECORD_OP("softmax", &x);
  if (!dtype && autocast::active(autocast::Op::softmax, x)) {
    autocast::Scope s(autocast::Op::softmax, x, {x});
    return softmax(s[0], dim, dtype);
  }
  if (autograd::needs_grad({&x})) return grad_ops::softmax(x, dim, dtype, false);
  return softmax_op("softmax", x, dim, dtype, false);
}

Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  EMBER_RECORD_OP("log_softmax", &x);
  if (!dtype && autocast::active(autocast::Op::log_softmax, x)) {
    autocast::Scope s(autocast::Op::log_softmax, x, {x});
    return log_softmax(s[0], dim, dtype);
  }
  if (autograd::needs_grad({&x})) return grad_ops::softmax(x, dim, dtype, true);
  return softmax_op("log_softmax", x, dim, dtype, true);
}

Tensor Tensor::softmax(int64_t dim) const { return ember::softmax(*this, dim); }
Tensor Tensor::log_softmax(int64_t dim) const { return ember::log_softmax(*this, dim); }

}  // namespace ember
