// Optimizer update math written once for host and device (EMBER_HD): PyTorch's single-tensor
// formulas of torch/optim (sgd.py, adam.py, rmsprop.py, adagrad.py), one element at a time.
// Every operand of a fused update has the parameter's numel: slot 0 the parameter, 1 its
// gradient, 2..4 the state tensors of the op (absent slots are never read or written).
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/macros.h"

namespace ember {

enum class OptimOp : uint8_t { SGD, Adam, RMSprop, Adagrad };

inline constexpr int kOptimSlots = 5;

// Group hyper-parameters, the same for every tensor of one fused update.
struct OptimHyper {
  double lr = 0.0;
  double weight_decay = 0.0;
  double momentum = 0.0;   // SGD, RMSprop
  double dampening = 0.0;  // SGD
  double beta1 = 0.9;      // Adam
  double beta2 = 0.999;    // Adam
  double alpha = 0.99;     // RMSprop
  double eps = 0.0;        // Adam, RMSprop, Adagrad
  bool nesterov = false;   // SGD
  bool maximize = false;
  bool amsgrad = false;    // Adam
  bool decoupled_weight_decay = false;  // AdamW
  bool centered = false;   // RMSprop
};

// Per-tensor values derived from its step count on the host.
struct OptimTensorScalars {
  double a = 0.0;  // Adam: lr / bias_correction1; Adagrad: lr / (1 + (step - 1) * lr_decay)
  double b = 1.0;  // Adam: sqrt(bias_correction2)
  bool first = false;  // SGD: the momentum buffer starts as the gradient
};

// State slots (after param and grad) each op uses.
//   SGD:     momentum_buffer (when momentum != 0)
//   Adam:    exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad)
//   RMSprop: square_avg, momentum_buffer (momentum > 0), grad_avg (centered)
//   Adagrad: sum
namespace optim_ops {

template <class C>
struct SgdStep {
  C lr, wd, momentum, damp_keep;
  bool nesterov, maximize, has_buf, first;
  EMBER_HD SgdStep(const OptimHyper& h, const OptimTensorScalars& t)
      : lr(C(h.lr)), wd(C(h.weight_decay)), momentum(C(h.momentum)), damp_keep(C(1.0 - h.dampening)),
        nesterov(h.nesterov), maximize(h.maximize), has_buf(h.momentum != 0.0), first(t.first) {}
  EMBER_HD void operator()(C& p, C g, C& buf, C&, C&) const {
    if (maximize) g = -g;
    if (wd != C(0)) g = g + wd * p;
    if (has_buf) {
      buf = first ? g : buf * momentum + damp_keep * g;
      g = nesterov ? g + momentum * buf : buf;
    }
    p = p + (-lr) * g;
  }
};

template <class C>
struct AdamStep {
  C wd, decay_factor, one_minus_beta1, beta2, one_minus_beta2, eps, step_size, bc2_sqrt;
  bool maximize, amsgrad, decoupled;
  EMBER_HD AdamStep(const OptimHyper& h, const OptimTensorScalars& t)
      : wd(C(h.weight_decay)), decay_factor(C(1.0 - h.lr * h.weight_decay)),
        one_minus_beta1(C(1.0 - h.beta1)), beta2(C(h.beta2)), one_minus_beta2(C(1.0 - h.beta2)),
        eps(C(h.eps)), step_size(C(t.a)), bc2_sqrt(C(t.b)), maximize(h.maximize),
        amsgrad(h.amsgrad), decoupled(h.decoupled_weight_decay) {}
  EMBER_HD void operator()(C& p, C g, C& m, C& v, C& vmax) const {
    if (maximize) g = -g;
    if (wd != C(0)) {
      if (decoupled) {
        p = p * decay_factor;
      } else {
        g = g + wd * p;
      }
    }
    m = m + one_minus_beta1 * (g - m);  // lerp_(grad, 1 - beta1)
    v = v * beta2 + one_minus_beta2 * (g * g);
    C second = v;
    if (amsgrad) {
      vmax = vmax > v ? vmax : v;
      second = vmax;
    }
    const C denom = std::sqrt(second) / bc2_sqrt + eps;
    p = p + (-step_size) * (m / denom);
  }
};

template <class C>
struct RmspropStep {
  C lr, wd, alpha, one_minus_alpha, eps, momentum;
  bool maximize, centered, has_buf;
  EMBER_HD RmspropStep(const OptimHyper& h, const OptimTensorScalars&)
      : lr(C(h.lr)), wd(C(h.weight_decay)), alpha(C(h.alpha)), one_minus_alpha(C(1.0 - h.alpha)),
        eps(C(h.eps)), momentum(C(h.momentum)), maximize(h.maximize), centered(h.centered),
        has_buf(h.momentum > 0.0) {}
  EMBER_HD void operator()(C& p, C g, C& square_avg, C& buf, C& grad_avg) const {
    if (maximize) g = -g;
    if (wd != C(0)) g = g + wd * p;
    square_avg = square_avg * alpha + one_minus_alpha * (g * g);
    C avg;
    if (centered) {
      grad_avg = grad_avg + one_minus_alpha * (g - grad_avg);  // lerp_(grad, 1 - alpha)
      avg = std::sqrt(square_avg + C(-1) * (grad_avg * grad_avg));
    } else {
      avg = std::sqrt(square_avg);
    }
    avg = avg + eps;
    if (has_buf) {
      buf = buf * momentum + g / avg;
      p = p + (-lr) * buf;
    } else {
      p = p + (-lr) * (g / avg);
    }
  }
};

template <class C>
struct AdagradStep {
  C wd, eps, clr;
  bool maximize;
  EMBER_HD AdagradStep(const OptimHyper& h, const OptimTensorScalars& t)
      : wd(C(h.weight_decay)), eps(C(h.eps)), clr(C(t.a)), maximize(h.maximize) {}
  EMBER_HD void operator()(C& p, C g, C& sum, C&, C&) const {
    if (maximize) g = -g;
    if (wd != C(0)) g = g + wd * p;
    sum = sum + g * g;
    const C std_ = std::sqrt(sum) + eps;
    p = p + (-clr) * (g / std_);
  }
};

}  // namespace optim_ops

// Calls fn(tag) with tag::type<C> the functor of op for compute type C.
template <template <class> class F>
struct OptimFunctorTag {
  template <class C>
  using type = F<C>;
};

template <class Fn>
decltype(auto) visit_optim_op(OptimOp op, Fn&& fn) {
  switch (op) {
    case OptimOp::SGD: return fn(OptimFunctorTag<optim_ops::SgdStep>{});
    case OptimOp::Adam: return fn(OptimFunctorTag<optim_ops::AdamStep>{});
    case OptimOp::RMSprop: return fn(OptimFunctorTag<optim_ops::RmspropStep>{});
    case OptimOp::Adagrad: break;
  }
  return fn(OptimFunctorTag<optim_ops::AdagradStep>{});
}

// Which state slots (2..4) an op reads and writes under h.
EMBER_HD inline int optim_slot_mask(OptimOp op, const OptimHyper& h) {
  switch (op) {
    case OptimOp::SGD: return h.momentum != 0.0 ? 1 : 0;
    case OptimOp::Adam: return 1 | 2 | (h.amsgrad ? 4 : 0);
    case OptimOp::RMSprop: return 1 | (h.momentum > 0.0 ? 2 : 0) | (h.centered ? 4 : 0);
    case OptimOp::Adagrad: return 1;
  }
  return 0;
}

}  // namespace ember
