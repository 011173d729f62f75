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
  bool amsgrad = false;                 // Adam
  bool decoupled_weight_decay = false;  // AdamW
  bool centered = false;                // RMSprop
};

// Per-tensor values derived from its step count on the host.
struct OptimTensorScalars {
  double a = 0.0;      // Adam: lr / bias_correction1; Adagrad: lr / (1 + (step - 1) * lr_decay)
  double b = 1.0;      // Adam: sqrt(bias_correction2)
  bool first = false;  // SGD: the momentum buffer starts as the gradient
};

// State slots (after param and grad) each op uses.
//   SGD:     momentum_buffer (when momentum != 0)
//   Adam:    exp_avg, exp_avg_sq, max_exp_avg_sq (amsgrad)
//   RMSprop: square_avg, momentum_buffer (momentum > 0), grad_avg (centered)
//   Adagrad: sum
// Flag tests inside a functor: per element through OptimFlags (the CUDA kernels), or fixed at
// compile time through FixedOptimFlags<Bits>, so that the CPU loops instantiate one body per flag
// combination with no test left in the loop. Either way the arithmetic is the same.
struct OptimFlags {
  unsigned bits;
  EMBER_HD constexpr bool operator()(unsigned f) const { return (bits & f) != 0; }
};
template <unsigned Bits>
struct FixedOptimFlags {
  EMBER_HD constexpr bool operator()(unsigned f) const { return (Bits & f) != 0; }
};

// Every functor: flags (its bits under h), kFlagCount (how many bits), slots(bits) (the state
// slots it uses, as optim_slot_mask), operator()(p, g, s0, s1, s2[, has]).
namespace optim_ops {

template <class C>
struct SgdStep {
  enum : unsigned { kMaximize = 1, kDecay = 2, kBuf = 4, kNesterov = 8, kFirst = 16 };
  static constexpr int kFlagCount = 5;
  C lr, wd, momentum, damp_keep;
  unsigned flags;
  EMBER_HD SgdStep(const OptimHyper& h, const OptimTensorScalars& t)
      : lr(C(h.lr)),
        wd(C(h.weight_decay)),
        momentum(C(h.momentum)),
        damp_keep(C(1.0 - h.dampening)),
        flags((h.maximize ? kMaximize : 0u) | (wd != C(0) ? kDecay : 0u) |
              (h.momentum != 0.0 ? kBuf | (h.nesterov ? kNesterov : 0u) | (t.first ? kFirst : 0u)
                                 : 0u)) {}
  EMBER_HD static constexpr int slots(unsigned bits) { return (bits & kBuf) ? 1 : 0; }
  template <class Has>
  EMBER_HD void operator()(C& p, C g, C& buf, C&, C&, Has has) const {
    if (has(kMaximize)) g = -g;
    if (has(kDecay)) g = g + wd * p;
    if (has(kBuf)) {
      buf = has(kFirst) ? g : buf * momentum + damp_keep * g;
      g = has(kNesterov) ? g + momentum * buf : buf;
    }
    p = p + (-lr) * g;
  }
  EMBER_HD void operator()(C& p, C g, C& a, C& b, C& c) const {
    (*this)(p, g, a, b, c, OptimFlags{flags});
  }
};

template <class C>
struct AdamStep {
  enum : unsigned { kMaximize = 1, kDecay = 2, kDecoupled = 4, kAmsgrad = 8 };
  static constexpr int kFlagCount = 4;
  C wd, decay_factor, one_minus_beta1, beta2, one_minus_beta2, eps, step_size, bc2_sqrt;
  unsigned flags;
  EMBER_HD AdamStep(const OptimHyper& h, const OptimTensorScalars& t)
      : wd(C(h.weight_decay)),
        decay_factor(C(1.0 - h.lr * h.weight_decay)),
        one_minus_beta1(C(1.0 - h.beta1)),
        beta2(C(h.beta2)),
        one_minus_beta2(C(1.0 - h.beta2)),
        eps(C(h.eps)),
        step_size(C(t.a)),
        bc2_sqrt(C(t.b)),
        flags((h.maximize ? kMaximize : 0u) |
              (wd != C(0) ? kDecay | (h.decoupled_weight_decay ? kDecoupled : 0u) : 0u) |
              (h.amsgrad ? kAmsgrad : 0u)) {}
  EMBER_HD static constexpr int slots(unsigned bits) { return 1 | 2 | ((bits & kAmsgrad) ? 4 : 0); }
  template <class Has>
  EMBER_HD void operator()(C& p, C g, C& m, C& v, C& vmax, Has has) const {
    if (has(kMaximize)) g = -g;
    if (has(kDecay)) {
      if (has(kDecoupled)) {
        p = p * decay_factor;
      } else {
        g = g + wd * p;
      }
    }
    m = m + one_minus_beta1 * (g - m);  // lerp_(grad, 1 - beta1)
    v = v * beta2 + one_minus_beta2 * (g * g);
    C second = v;
    if (has(kAmsgrad)) {
      vmax = vmax > v ? vmax : v;
      second = vmax;
    }
    const C denom = std::sqrt(second) / bc2_sqrt + eps;
    p = p + (-step_size) * (m / denom);
  }
  EMBER_HD void operator()(C& p, C g, C& a, C& b, C& c) const {
    (*this)(p, g, a, b, c, OptimFlags{flags});
  }
};

template <class C>
struct RmspropStep {
  enum : unsigned { kMaximize = 1, kDecay = 2, kCentered = 4, kBuf = 8 };
  static constexpr int kFlagCount = 4;
  C lr, wd, alpha, one_minus_alpha, eps, momentum;
  unsigned flags;
  EMBER_HD RmspropStep(const OptimHyper& h, const OptimTensorScalars&)
      : lr(C(h.lr)),
        wd(C(h.weight_decay)),
        alpha(C(h.alpha)),
        one_minus_alpha(C(1.0 - h.alpha)),
        eps(C(h.eps)),
        momentum(C(h.momentum)),
        flags((h.maximize ? kMaximize : 0u) | (wd != C(0) ? kDecay : 0u) |
              (h.centered ? kCentered : 0u) | (h.momentum > 0.0 ? kBuf : 0u)) {}
  EMBER_HD static constexpr int slots(unsigned bits) {
    return 1 | ((bits & kBuf) ? 2 : 0) | ((bits & kCentered) ? 4 : 0);
  }
  template <class Has>
  EMBER_HD void operator()(C& p, C g, C& square_avg, C& buf, C& grad_avg, Has has) const {
    if (has(kMaximize)) g = -g;
    if (has(kDecay)) g = g + wd * p;
    square_avg = square_avg * alpha + one_minus_alpha * (g * g);
    C avg;
    if (has(kCentered)) {
      grad_avg = grad_avg + one_minus_alpha * (g - grad_avg);  // lerp_(grad, 1 - alpha)
      avg = std::sqrt(square_avg + C(-1) * (grad_avg * grad_avg));
    } else {
      avg = std::sqrt(square_avg);
    }
    avg = avg + eps;
    if (has(kBuf)) {
      buf = buf * momentum + g / avg;
      p = p + (-lr) * buf;
    } else {
      p = p + (-lr) * (g / avg);
    }
  }
  EMBER_HD void operator()(C& p, C g, C& a, C& b, C& c) const {
    (*this)(p, g, a, b, c, OptimFlags{flags});
  }
};

template <class C>
struct AdagradStep {
  enum : unsigned { kMaximize = 1, kDecay = 2 };
  static constexpr int kFlagCount = 2;
  C wd, eps, clr;
  unsigned flags;
  EMBER_HD AdagradStep(const OptimHyper& h, const OptimTensorScalars& t)
      : wd(C(h.weight_decay)),
        eps(C(h.eps)),
        clr(C(t.a)),
        flags((h.maximize ? kMaximize : 0u) | (wd != C(0) ? kDecay : 0u)) {}
  EMBER_HD static constexpr int slots(unsigned) { return 1; }
  template <class Has>
  EMBER_HD void operator()(C& p, C g, C& sum, C&, C&, Has has) const {
    if (has(kMaximize)) g = -g;
    if (has(kDecay)) g = g + wd * p;
    sum = sum + g * g;
    const C std_ = std::sqrt(sum) + eps;
    p = p + (-clr) * (g / std_);
  }
  EMBER_HD void operator()(C& p, C g, C& a, C& b, C& c) const {
    (*this)(p, g, a, b, c, OptimFlags{flags});
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
    case OptimOp::SGD:
      return fn(OptimFunctorTag<optim_ops::SgdStep>{});
    case OptimOp::Adam:
      return fn(OptimFunctorTag<optim_ops::AdamStep>{});
    case OptimOp::RMSprop:
      return fn(OptimFunctorTag<optim_ops::RmspropStep>{});
    case OptimOp::Adagrad:
      break;
  }
  return fn(OptimFunctorTag<optim_ops::AdagradStep>{});
}

// Which state slots (2..4) an op reads and writes under h.
EMBER_HD inline int optim_slot_mask(OptimOp op, const OptimHyper& h) {
  switch (op) {
    case OptimOp::SGD:
      return h.momentum != 0.0 ? 1 : 0;
    case OptimOp::Adam:
      return 1 | 2 | (h.amsgrad ? 4 : 0);
    case OptimOp::RMSprop:
      return 1 | (h.momentum > 0.0 ? 2 : 0) | (h.centered ? 4 : 0);
    case OptimOp::Adagrad:
      return 1;
  }
  return 0;
}

}  // namespace ember
