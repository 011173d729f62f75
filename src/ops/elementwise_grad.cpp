// Derivatives of the element-wise ops: the derivative column of kernels/elementwise_ops.def
// expanded into one backward per family, and the formulas too long for a table cell. Written
// with ember ops so they run on every device and can themselves be differentiated (create_graph).
#include "ops/elementwise_grad.h"

#include <cmath>

#include "autograd/function.h"
#include "ember/ops.h"

namespace ember {

using autograd::GradContext;
using autograd::sum_to;

namespace {

constexpr double kLn2 = 0.69314718055994530942;

Tensor mask_of(const Tensor& cond, const Tensor& like) { return cond.to(like.dtype()); }

bool saves_inputs(Saved s) { return s == Saved::Inputs || s == Saved::InputsAndOutput; }
bool saves_output(Saved s) { return s == Saved::Output || s == Saved::InputsAndOutput; }

// ---- formulas the table names -------------------------------------------------------------------

Tensor silu_grad(const Tensor& g, const Tensor& x) {
  Tensor s = sigmoid(x);
  return g * s * (1 + x * (1 - s));
}

Tensor gelu_grad(const Tensor& g, const Tensor& x) {
  Tensor cdf = (erf(x * M_SQRT1_2) + 1) * 0.5;
  Tensor pdf = exp(x * x * -0.5) * (1.0 / std::sqrt(2 * M_PI));
  return g * (cdf + x * pdf);
}

Tensor gelu_tanh_grad(const Tensor& g, const Tensor& x) {
  const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
  Tensor t = tanh((x + x * x * x * c) * k);
  Tensor left = x * 0.5, right = t + 1;
  Tensor d_right = left * (1 - t * t) * ((x * x * (3 * c) + 1) * k);
  return g * (right * 0.5 + d_right);
}

Tensor softplus_grad(const Tensor& g, const Tensor& x, const ElementwiseParams& p) {
  Tensor bx = x * p.a;
  return where(bx > p.b, g, g * sigmoid(bx));
}

Tensor clamp_grad(const Tensor& g, const Tensor& x, const ElementwiseParams& p) {
  Tensor keep = ones_like(x, TensorOptions().dtype(kBool).device(x.device()));
  if (p.has_a) keep = logical_and(keep, x >= p.a);
  if (p.has_b) keep = logical_and(keep, x <= p.b);
  return g * mask_of(keep, g);
}

// maximum / minimum: the first input's share of the gradient (wins: where it is the result).
Tensor tie_share(const Tensor& wins, const Tensor& x, const Tensor& y, const Tensor& g) {
  return where(x == y, full_like(g, 0.5), wins.to(g.dtype()));
}

// clamp(x, lo, hi) = min(max(x, lo), hi) with tensor bounds: the last bound applied wins. The
// gradient of input `input` (0: x, 1: lo, 2: hi); undefined for a bound that was not given.
Tensor clamp_tensor_grad(const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& z,
                         const ElementwiseParams& p, int input) {
  if ((input == 1 && !p.has_a) || (input == 2 && !p.has_b)) return Tensor();
  TensorOptions bools = TensorOptions().dtype(kBool).device(x.device());
  Tensor raised = p.has_a ? maximum(x, y) : x;
  Tensor hi_hit = p.has_b ? raised > z : zeros_like(x, bools);
  if (input == 2) return g * hi_hit.to(g.dtype());
  Tensor lo_hit = p.has_a ? logical_and(x < y, logical_not(hi_hit)) : zeros_like(x, bools);
  if (input == 1) return g * lo_hit.to(g.dtype());
  return g * logical_not(logical_or(lo_hit, hi_hit)).to(g.dtype());
}

[[noreturn]] void not_differentiable(const ElementwiseOpInfo& info) {
  throw Error("[" + std::string(info.name) + "] is not differentiable");
}

// ---- the derivative column, per family ----------------------------------------------------------
// g: the output's gradient; x, y, z: the inputs; out: the result; p: the op's parameters. The
// tensors the row does not save are undefined.

Tensor unary_grad(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& out,
                  const ElementwiseParams& p) {
  switch (op) {
#define EMBER_GRAD(node, saved, dx) return dx;
#define EMBER_ZERO_GRAD(node) return zeros_like(g);
#define EMBER_NO_GRAD break;
#define EMBER_UNARY_OP(Enum, name, dtypes, result, api, derivative) \
  case UnaryOp::Enum:                                               \
    derivative
#include "kernels/elementwise_ops.def"
  }
  not_differentiable(op_info(op));
}

void binary_grad(BinaryOp op, const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& out,
                 const ElementwiseParams& p, const GradContext& c, Tensor& ga, Tensor& gb) {
  switch (op) {
#define EMBER_GRAD(node, saved, dx, dy) \
  if (c.needs(0)) ga = dx;              \
  if (c.needs(1)) gb = dy;              \
  return;
#define EMBER_ZERO_GRAD(node) \
  ga = zeros_like(g);         \
  gb = zeros_like(g);         \
  return;
#define EMBER_NO_GRAD break;
#define EMBER_BINARY_OP(Enum, name, dtypes, result, api, derivative) \
  case BinaryOp::Enum:                                               \
    derivative
#include "kernels/elementwise_ops.def"
  }
  not_differentiable(op_info(op));
}

void ternary_grad(TernaryOp op, const Tensor& g, const Tensor& x, const Tensor& y, const Tensor& z,
                  const Tensor& out, const ElementwiseParams& p, const GradContext& c, Tensor& ga,
                  Tensor& gb, Tensor& gc) {
  switch (op) {
#define EMBER_GRAD(node, saved, dx, dy, dz) \
  if (c.needs(0)) ga = dx;                  \
  if (c.needs(1)) gb = dy;                  \
  if (c.needs(2)) gc = dz;                  \
  return;
#define EMBER_ZERO_GRAD(node) \
  ga = zeros_like(g);         \
  gb = zeros_like(g);         \
  gc = zeros_like(g);         \
  return;
#define EMBER_NO_GRAD break;
#define EMBER_TERNARY_OP(Enum, name, dtypes, result, api, derivative) \
  case TernaryOp::Enum:                                               \
    derivative
#include "kernels/elementwise_ops.def"
  }
  (void)out;
  not_differentiable(op_info(op));
}

// What a node saves: the inputs (when the row saves them), then the result (when it does).
TensorList saved_of(const ElementwiseOpInfo& info, const TensorList& inputs, const Tensor& out) {
  TensorList saved;
  if (saves_inputs(info.saved)) saved = inputs;
  if (saves_output(info.saved)) saved.push_back(out);
  return saved;
}

// Unpacks saved_of's list: n inputs (undefined when not saved) and the result.
TensorList unpack_saved(Saved s, const TensorList& saved, size_t n) {
  TensorList r(n + 1);
  const size_t in = saves_inputs(s) ? n : 0;
  for (size_t i = 0; i < in; ++i) r[i] = saved[i];
  if (saves_output(s)) r[n] = saved[in];
  return r;
}

}  // namespace

void record_unary(UnaryOp op, const Tensor& x, const Tensor& out, const ElementwiseParams& p) {
  const ElementwiseOpInfo& info = op_info(op);
  if (!is_floating_point(out.dtype()) || info.grad == Grad::None) return;
  autograd::record(info.node, {x}, {out}, saved_of(info, {x}, out),
                   [op, p, s = info.saved](const TensorList& g, const GradContext& c) {
                     TensorList v = unpack_saved(s, c.saved, 1);
                     return TensorList{unary_grad(op, g[0], v[0], v[1], p)};
                   });
}

void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                   const ElementwiseParams& p) {
  const ElementwiseOpInfo& info = op_info(op);
  if (!is_floating_point(out.dtype()) || info.grad == Grad::None) return;
  Shape sa = a.sizes(), sb = b.sizes();
  autograd::record(
      info.node, {a, b}, {out}, saved_of(info, {a, b}, out),
      [op, p, sa, sb, s = info.saved](const TensorList& gs, const GradContext& c) -> TensorList {
        TensorList v = unpack_saved(s, c.saved, 2);
        Tensor ga, gb;
        binary_grad(op, gs[0], v[0], v[1], v[2], p, c, ga, gb);
        return {c.needs(0) && ga.defined() ? sum_to(ga, sa) : Tensor(),
                c.needs(1) && gb.defined() ? sum_to(gb, sb) : Tensor()};
      });
}

void record_ternary(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& t,
                    const Tensor& out, const ElementwiseParams& p) {
  const ElementwiseOpInfo& info = op_info(op);
  if (!is_floating_point(out.dtype()) || info.grad == Grad::None) return;
  Shape sa = a.sizes(), sb = b.sizes(), st = t.sizes();
  autograd::record(info.node, {a, b, t}, {out}, saved_of(info, {a, b, t}, out),
                   [op, p, sa, sb, st, s = info.saved](const TensorList& gs,
                                                       const GradContext& c) -> TensorList {
                     TensorList v = unpack_saved(s, c.saved, 3);
                     Tensor ga, gb, gt;
                     ternary_grad(op, gs[0], v[0], v[1], v[2], v[3], p, c, ga, gb, gt);
                     return {c.needs(0) && ga.defined() ? sum_to(ga, sa) : Tensor(),
                             c.needs(1) && gb.defined() ? sum_to(gb, sb) : Tensor(),
                             c.needs(2) && gt.defined() ? sum_to(gt, st) : Tensor()};
                   });
}

void record_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out) {
  if (!is_floating_point(out.dtype())) return;
  Shape sa = a.sizes(), sb = b.sizes();
  autograd::record("WhereBackward0", {a, b}, {out}, {cond},
                   [sa, sb](const TensorList& gs, const GradContext& c) {
                     const Tensor& g = gs[0];
                     Tensor z = zeros_like(g);
                     return TensorList{c.needs(0) ? sum_to(where(c.saved[0], g, z), sa) : Tensor(),
                                       c.needs(1) ? sum_to(where(c.saved[0], z, g), sb) : Tensor()};
                   });
}

}  // namespace ember
