// Losses. cross_entropy and nll_loss with class-index targets run the fused backend family
// (one pass per row forward and backward); the others are composed of differentiable ops.
#include "ember/nn/functional/loss.h"

#include <cmath>

#include "autograd/function.h"
#include "backend/backend.h"
#include "ember/ops.h"
#include "ops/op_utils.h"

namespace ember::nn::functional {

namespace {

enum class Reduction { None, Mean, Sum, BatchMean };

Reduction parse_reduction(const char* op, const std::string& r, bool batchmean = false) {
  if (r == "none") return Reduction::None;
  if (r == "mean") return Reduction::Mean;
  if (r == "sum") return Reduction::Sum;
  if (batchmean && r == "batchmean") return Reduction::BatchMean;
  throw ValueError(op_prefix(op) + r + " is not a valid value for reduction (expected 'none', " +
                   "'mean'" + (batchmean ? ", 'batchmean'" : "") + " or 'sum')");
}

Tensor reduce(const Tensor& l, Reduction r) {
  switch (r) {
    case Reduction::None:
      return l;
    case Reduction::Sum:
      return l.sum();
    default:
      return l.mean();
  }
}

void check_defined(const char* op, const Tensor& input, const Tensor& target) {
  if (!input.defined() || !target.defined()) {
    throw ValueError(op_prefix(op) + "input and target must be defined tensors");
  }
}

void check_floating(const char* op, const Tensor& input) {
  if (!is_floating_point(input.dtype())) {
    throw TypeError(op_prefix(op) + "expected a floating input, got " +
                    std::string(dtype_name(input.dtype())) + " of shape " + shape_str(input));
  }
}

// Element-wise losses: input and target of one shape (broadcast as PyTorch does).
void check_pair(const char* op, const Tensor& input, const Tensor& target) {
  check_defined(op, input, target);
  check_floating(op, input);
  broadcast_shapes(op, input.sizes(), target.sizes());
}

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

// cross_entropy / nll_loss with class-index targets.
Tensor class_index_loss(const Tensor& input, const Tensor& target, const Tensor& weight,
                        int64_t ignore_index, double label_smoothing, const std::string& reduction,
                        const CrossEntropyParams& base) {
  const char* op = base.op;
  const Reduction red = parse_reduction(op, reduction);
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
  CrossEntropyParams p = base;
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

// cross_entropy with class-probability targets of input's shape.
Tensor probability_loss(const Tensor& input, const Tensor& target,
                        const CrossEntropyFuncOptions& o) {
  const char* op = "cross_entropy";
  const Reduction red = parse_reduction(op, o.reduction());
  if (input.dim() == 0 || target.sizes() != input.sizes()) {
    throw ValueError(op_prefix(op) + "Expected floating target (class probabilities) of input's " +
                     "shape " + shape_str(input) + ", got " + shape_str(target));
  }
  const double ls = o.label_smoothing();
  if (ls < 0.0 || ls > 1.0) {
    throw ValueError(op_prefix(op) +
                     "label_smoothing must be between 0.0 and 1.0. Got: " + std::to_string(ls));
  }
  const int64_t cdim = input.dim() == 1 ? 0 : 1;
  const int64_t c = input.size(cdim);
  Tensor t = ls > 0 ? target * (1.0 - ls) + ls / static_cast<double>(c) : target;
  Tensor prod = ember::log_softmax(input, cdim) * t;
  if (o.weight().defined()) {
    if (o.weight().dim() != 1 || o.weight().size(0) != c) {
      throw ValueError(op_prefix(op) + "weight tensor should be defined either for all " +
                       std::to_string(c) + " classes or no classes but got weight tensor of " +
                       "shape: " + shape_str(o.weight()));
    }
    Shape ws(static_cast<size_t>(input.dim() - cdim), 1);
    ws[0] = c;
    prod = prod * o.weight().reshape(ws);
  }
  Tensor l = -prod.sum({cdim});
  switch (red) {
    case Reduction::None:
      return l;
    case Reduction::Sum:
      return l.sum();
    default:
      return l.sum() / static_cast<double>(input.numel() / std::max<int64_t>(c, 1));
  }
}

}  // namespace

Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const CrossEntropyFuncOptions& options) {
  check_defined("cross_entropy", input, target);
  check_floating("cross_entropy", input);
  if (is_floating_point(target.dtype())) return probability_loss(input, target, options);
  return class_index_loss(input, target, options.weight(), options.ignore_index(),
                          options.label_smoothing(), options.reduction(), CrossEntropyParams{});
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  check_defined("nll_loss", input, target);
  check_floating("nll_loss", input);
  CrossEntropyParams p;
  p.op = "nll_loss";
  p.from_logits = false;
  return class_index_loss(input, target, options.weight(), options.ignore_index(), 0.0,
                          options.reduction(), p);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  check_pair("mse_loss", input, target);
  const Reduction r = parse_reduction("mse_loss", options.reduction());
  return reduce(pow(input - target, 2), r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  check_pair("l1_loss", input, target);
  const Reduction r = parse_reduction("l1_loss", options.reduction());
  return reduce(abs(input - target), r);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options) {
  check_pair("smooth_l1_loss", input, target);
  const Reduction r = parse_reduction("smooth_l1_loss", options.reduction());
  const double beta = options.beta();
  if (beta < 0) {
    throw ValueError("[smooth_l1_loss] beta must be non-negative, got " + std::to_string(beta));
  }
  Tensor d = abs(input - target);
  if (beta == 0.0) return reduce(d, r);
  return reduce(where(lt(d, beta), d * d * (0.5 / beta), d - 0.5 * beta), r);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  check_pair("huber_loss", input, target);
  const Reduction r = parse_reduction("huber_loss", options.reduction());
  const double delta = options.delta();
  if (delta <= 0) {
    throw ValueError("[huber_loss] delta must be positive, got " + std::to_string(delta));
  }
  Tensor d = abs(input - target);
  return reduce(where(lt(d, delta), d * d * 0.5, (d - 0.5 * delta) * delta), r);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options) {
  check_pair("binary_cross_entropy", input, target);
  const Reduction r = parse_reduction("binary_cross_entropy", options.reduction());
  if (input.sizes() != target.sizes()) {
    throw ValueError("[binary_cross_entropy] Using a target size (" + shape_str(target) +
                     ") that is different to the input size (" + shape_str(input) +
                     ") is deprecated. Please ensure they have the same size.");
  }
  Tensor l = -(target * clamp(log(input), Scalar(-100.0)) +
               (1 - target) * clamp(log1p(-input), Scalar(-100.0)));
  if (options.weight().defined()) l = l * options.weight();
  return reduce(l, r);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  const char* op = "binary_cross_entropy_with_logits";
  check_pair(op, input, target);
  const Reduction r = parse_reduction(op, options.reduction());
  if (input.sizes() != target.sizes()) {
    throw ValueError(op_prefix(op) + "Target size (" + shape_str(target) +
                     ") must be the same as input size (" + shape_str(input) + ")");
  }
  // -log sigmoid(x) = softplus(-x), stable for large |x|.
  Tensor nls = ember::softplus(-input);
  Tensor l = options.pos_weight().defined()
                 ? (1 - target) * input + ((options.pos_weight() - 1) * target + 1) * nls
                 : (1 - target) * input + nls;
  if (options.weight().defined()) l = l * options.weight();
  return reduce(l, r);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  check_pair("kl_div", input, target);
  const Reduction r = parse_reduction("kl_div", options.reduction(), true);
  Tensor l;
  if (options.log_target()) {
    l = exp(target) * (target - input);
  } else {
    // target * log(target) is 0 where target is 0 (xlogy), with a finite gradient there.
    Tensor safe = where(gt(target, 0.0), target, 1.0);
    l = target * log(safe) - target * input;
  }
  if (r == Reduction::BatchMean) return input.dim() == 0 ? l.sum() : l.sum() / input.size(0);
  return reduce(l, r);
}

}  // namespace ember::nn::functional
