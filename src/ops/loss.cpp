// The fused cross-entropy family (cross_entropy and nll_loss with class-index targets): argument
// checks, the backend's one-pass rows forward and backward, and the reduction. Also the parsing of
// the reduction argument every loss takes. Entry points of ops/nn_ops.h.
#include <string>
#include <utility>

#include "autograd/function.h"
#include "ops/nn_ops.h"
#include "ops/op_utils.h"

namespace ember::ops {

namespace {

DType acc_dtype(DType t) { return t == kFloat64 ? kFloat64 : kFloat32; }

// The fused rows: x (M, C), t (M) int64 -> (loss (M), weight of each row's target (M)), both in
// the accumulation dtype; loss is differentiable with respect to x.
std::pair<Tensor, Tensor> fused_rows(const Tensor& x, const Tensor& t, const Tensor& weight,
                                     const CrossEntropyParams& p) {
  const Device dev = x.device();
  const DType acc = acc_dtype(x.dtype());
  const int64_t m = x.size(0);
  Tensor xc, w, wsum;
  Tensor loss = make_empty({m}, acc, dev, false, p.op);
  Tensor row_w = make_empty({m}, acc, dev, false, p.op);
  Tensor lse = make_empty({m}, acc, dev, false, p.op);
  {
    NoGradGuard g;
    xc = x.contiguous();
    if (weight.defined()) {
      w = to_operand(weight, x.dtype(), dev).contiguous();
      if (p.from_logits && p.label_smoothing > 0) wsum = ember::sum(w, {}, false, acc).reshape({1});
    }
    backend(dev).cross_entropy(loss, row_w, lse, xc, t, w, wsum, p);
  }
  if (autograd::needs_grad({&x})) {
    autograd::record(p.from_logits ? "CrossEntropyLossBackward0" : "NllLossBackward0", {x}, {loss},
                     {xc, lse, t, w, wsum},
                     [p, acc](const TensorList& g, const autograd::GradContext& c) {
                       const Tensor& xs = c.saved[0];
                       Tensor gr = g[0].to(acc);
                       Tensor gx = make_empty(xs.sizes(), xs.dtype(), xs.device(), false, p.op);
                       backend(xs.device())
                           .cross_entropy_backward(gx, gr, xs, c.saved[1], c.saved[2], c.saved[3],
                                                   c.saved[4], p);
                       return TensorList{gx};
                     });
  }
  return {loss, row_w};
}

}  // namespace

void check_loss_operands(const char* op, const Tensor& input, const Tensor& target) {
  if (!input.defined() || !target.defined()) {
    throw ValueError(op_prefix(op) + "input and target must be defined tensors");
  }
  if (!is_floating_point(input.dtype())) {
    throw TypeError(op_prefix(op) + "expected a floating input, got " +
                    std::string(dtype_name(input.dtype())) + " of shape " + shape_str(input));
  }
}

Reduction parse_reduction(const char* op, const std::string& r, bool batchmean) {
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (batchmean && r == "batchmean") return Reduction::BatchMean;
  throw ValueError(op_prefix(op) + r + " is not a valid value for reduction (expected 'none', " +
                   "'mean'" + (batchmean ? ", 'batchmean'" : "") + " or 'sum')");
}

Tensor class_index_loss(const char* op, bool from_logits, const Tensor& input, const Tensor& target,
                        const Tensor& weight, int64_t ignore_index, double label_smoothing,
                        Reduction red) {
  check_loss_operands(op, input, target);
  if (input.dim() == 0) {
    throw ValueError(op_prefix(op) + "input must have a class dim, got a 0-dim tensor");
  }
  if (!is_integral(target.dtype(), false)) {
    throw TypeError(op_prefix(op) + "expected class-index targets of an integer dtype, got " +
                    std::string(dtype_name(target.dtype())));
  }
  if (input.dim() == 1) {
    if (target.dim() != 0) {
      throw ValueError(op_prefix(op) + "Expected a 0-dim target for unbatched input of shape " +
                       shape_str(input) + ", got target of shape " + shape_str(target));
    }
  } else {
    if (target.dim() == 0 || input.size(0) != target.size(0)) {
      throw ValueError(op_prefix(op) + "Expected input batch_size (" +
                       std::to_string(input.size(0)) + ") to match target batch_size (" +
                       std::to_string(target.dim() == 0 ? 0 : target.size(0)) + ").");
    }
    Shape expected{input.size(0)};
    for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
    if (target.sizes() != expected) {
      throw ValueError(op_prefix(op) + "Expected target size " + shape_str(expected) + ", got " +
                       shape_str(target) + " (input of shape " + shape_str(input) + ")");
    }
  }
  const int64_t c = input.dim() == 1 ? input.size(0) : input.size(1);
  if (weight.defined() && (weight.dim() != 1 || weight.size(0) != c)) {
    throw ValueError(op_prefix(op) + "weight tensor should be defined either for all " +
                     std::to_string(c) +
                     " classes or no classes but got weight tensor of shape: " + shape_str(weight));
  }
  if (label_smoothing < 0.0 || label_smoothing > 1.0) {
    throw ValueError(op_prefix(op) + "label_smoothing must be between 0.0 and 1.0. Got: " +
                     std::to_string(label_smoothing));
  }
  const Device dev = common_device(op, {&input, &target, &weight});
  Tensor x2 = input.dim() == 1   ? input.unsqueeze(0)
              : input.dim() == 2 ? input
                                 : input.movedim(1, -1).reshape({-1, c});
  Tensor t2 = to_operand(target, kInt64, dev).reshape({-1}).contiguous();
  CrossEntropyParams p;
  p.op = op;
  p.from_logits = from_logits;
  p.ignore_index = ignore_index;
  p.label_smoothing = label_smoothing;
  auto [rows, row_w] = fused_rows(x2, t2, weight, p);
  Tensor out;
  switch (red) {
    case Reduction::None:
      out = rows.reshape(target.sizes());
      break;
    case Reduction::Sum:
      out = rows.sum();
      break;
    default:
      out = rows.sum() / row_w.sum();
      break;
  }
  return out.to(input.dtype());
}

}  // namespace ember::ops
