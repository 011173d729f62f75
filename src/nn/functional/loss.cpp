// Losses. cross_entropy and nll_loss with class-index targets are the op layer's fused family
// (ops/nn_ops.h); the others are composed of differentiable ops.
#include "ember/nn/functional/loss.h"

#include <cmath>

#include "core/tensor_util.h"
#include "ember/ops.h"
#include "ops/autocast.h"
#include "ops/nn_ops.h"

namespace ember::nn::functional {

namespace {

using ops::parse_reduction;
using ops::Reduction;

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

// Element-wise losses: input and target of one shape (broadcast as PyTorch does).
void check_pair(const char* op, const Tensor& input, const Tensor& target) {
  ops::check_loss_operands(op, input, target);
  broadcast_shapes(op, input.sizes(), target.sizes());
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
  if (autocast::active(autocast::Op::cross_entropy, input)) {
    autocast::Scope s(autocast::Op::cross_entropy, input, {input, target, options.weight()});
    return cross_entropy(s[0], s[1], CrossEntropyFuncOptions(options).weight(s[2]));
  }
  ops::check_loss_operands("cross_entropy", input, target);
  if (is_floating_point(target.dtype())) return probability_loss(input, target, options);
  return ops::class_index_loss("cross_entropy", true, input, target, options.weight(),
                               options.ignore_index(), options.label_smoothing(),
                               parse_reduction("cross_entropy", options.reduction()));
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& options) {
  if (autocast::active(autocast::Op::nll_loss, input)) {
    autocast::Scope s(autocast::Op::nll_loss, input, {input, target, options.weight()});
    return nll_loss(s[0], s[1], NLLLossFuncOptions(options).weight(s[2]));
  }
  ops::check_loss_operands("nll_loss", input, target);
  return ops::class_index_loss("nll_loss", false, input, target, options.weight(),
                               options.ignore_index(), 0.0,
                               parse_reduction("nll_loss", options.reduction()));
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  if (autocast::active(autocast::Op::mse_loss, input)) {
    autocast::Scope s(autocast::Op::mse_loss, input, {input, target});
    return mse_loss(s[0], s[1], options);
  }
  check_pair("mse_loss", input, target);
  const Reduction r = parse_reduction("mse_loss", options.reduction());
  return reduce(pow(input - target, 2), r);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  if (autocast::active(autocast::Op::l1_loss, input)) {
    autocast::Scope s(autocast::Op::l1_loss, input, {input, target});
    return l1_loss(s[0], s[1], options);
  }
  check_pair("l1_loss", input, target);
  const Reduction r = parse_reduction("l1_loss", options.reduction());
  return reduce(abs(input - target), r);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      const SmoothL1LossFuncOptions& options) {
  if (autocast::active(autocast::Op::smooth_l1_loss, input)) {
    autocast::Scope s(autocast::Op::smooth_l1_loss, input, {input, target});
    return smooth_l1_loss(s[0], s[1], options);
  }
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
  if (autocast::active(autocast::Op::huber_loss, input)) {
    autocast::Scope s(autocast::Op::huber_loss, input, {input, target});
    return huber_loss(s[0], s[1], options);
  }
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
  if (autocast::active(autocast::Op::binary_cross_entropy, input)) {
    autocast::Scope s(autocast::Op::binary_cross_entropy, input, {input, target, options.weight()});
    return binary_cross_entropy(s[0], s[1], BinaryCrossEntropyFuncOptions(options).weight(s[2]));
  }
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
  if (autocast::active(autocast::Op::binary_cross_entropy_with_logits, input)) {
    autocast::Scope s(autocast::Op::binary_cross_entropy_with_logits, input,
                      {input, target, options.weight(), options.pos_weight()});
    return binary_cross_entropy_with_logits(
        s[0], s[1], BinaryCrossEntropyWithLogitsFuncOptions(options).weight(s[2]).pos_weight(s[3]));
  }
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
  if (autocast::active(autocast::Op::kl_div, input)) {
    autocast::Scope s(autocast::Op::kl_div, input, {input, target});
    return kl_div(s[0], s[1], options);
  }
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
