// Derivatives of the element-wise ops, written with ember ops so they run on every device and
// can themselves be differentiated (create_graph).
#include "ops/elementwise_grad.h"

#include <cmath>

#include "autograd/function.h"
#include "ember/ops.h"

namespace ember {

using autograd::GradContext;
using autograd::sum_to;

namespace {

Tensor mask_of(const Tensor& cond, const Tensor& like) { return cond.to(like.dtype()); }

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "NegBackward0";
    case UnaryOp::Abs:
      return "AbsBackward0";
    case UnaryOp::Exp:
      return "ExpBackward0";
    case UnaryOp::Exp2:
      return "Exp2Backward0";
    case UnaryOp::Log:
      return "LogBackward0";
    case UnaryOp::Log2:
      return "Log2Backward0";
    case UnaryOp::Log1p:
      return "Log1PBackward0";
    case UnaryOp::Expm1:
      return "Expm1Backward0";
    case UnaryOp::Sqrt:
      return "SqrtBackward0";
    case UnaryOp::Rsqrt:
      return "RsqrtBackward0";
    case UnaryOp::Reciprocal:
      return "ReciprocalBackward0";
    case UnaryOp::Sin:
      return "SinBackward0";
    case UnaryOp::Cos:
      return "CosBackward0";
    case UnaryOp::Tan:
      return "TanBackward0";
    case UnaryOp::Tanh:
      return "TanhBackward0";
    case UnaryOp::Sigmoid:
      return "SigmoidBackward0";
    case UnaryOp::Erf:
      return "ErfBackward0";
    case UnaryOp::Relu:
      return "ReluBackward0";
    case UnaryOp::Gelu:
    case UnaryOp::GeluTanh:
      return "GeluBackward0";
    case UnaryOp::Silu:
      return "SiluBackward0";
    case UnaryOp::Softplus:
      return "SoftplusBackward0";
    case UnaryOp::Elu:
      return "EluBackward0";
    case UnaryOp::LeakyRelu:
      return "LeakyReluBackward0";
    case UnaryOp::Clamp:
      return "ClampBackward1";
    case UnaryOp::PowScalar:
      return "PowBackward0";
    default:
      return "ZeroGradBackward0";  // sign, floor, ceil, round, trunc: piecewise constant
  }
}

// d out / d x times g. x: the input, y: the output.
Tensor unary_grad(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y,
                  const ElementwiseParams& p) {
  constexpr double kLn2 = 0.69314718055994530942;
  switch (op) {
    case UnaryOp::Neg:
      return -g;
    case UnaryOp::Abs:
      return g * sign(x);
    case UnaryOp::Exp:
      return g * y;
    case UnaryOp::Exp2:
      return g * y * kLn2;
    case UnaryOp::Log:
      return g / x;
    case UnaryOp::Log2:
      return g / (x * kLn2);
    case UnaryOp::Log1p:
      return g / (x + 1);
    case UnaryOp::Expm1:
      return g * (y + 1);
    case UnaryOp::Sqrt:
      return g / (y * 2);
    case UnaryOp::Rsqrt:
      return g * y.pow(3) * -0.5;
    case UnaryOp::Reciprocal:
      return -g * y * y;
    case UnaryOp::Sin:
      return g * cos(x);
    case UnaryOp::Cos:
      return -g * sin(x);
    case UnaryOp::Tan:
      return g * (y * y + 1);
    case UnaryOp::Tanh:
      return g * (1 - y * y);
    case UnaryOp::Sigmoid:
      return g * y * (1 - y);
    case UnaryOp::Erf:
      return g * exp(-(x * x)) * (2.0 / std::sqrt(M_PI));
    case UnaryOp::Relu:
      return relu_backward(g, y);
    case UnaryOp::Silu: {
      Tensor s = sigmoid(x);
      return g * s * (1 + x * (1 - s));
    }
    case UnaryOp::Gelu: {
      Tensor cdf = (erf(x * M_SQRT1_2) + 1) * 0.5;
      Tensor pdf = exp(x * x * -0.5) * (1.0 / std::sqrt(2 * M_PI));
      return g * (cdf + x * pdf);
    }
    case UnaryOp::GeluTanh: {
      const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
      Tensor t = tanh((x + x * x * x * c) * k);
      Tensor left = x * 0.5, right = t + 1;
      Tensor d_right = left * (1 - t * t) * ((x * x * (3 * c) + 1) * k);
      return g * (right * 0.5 + d_right);
    }
    case UnaryOp::Softplus: {
      Tensor bx = x * p.a;
      return where(bx > p.b, g, g * sigmoid(bx));
    }
    case UnaryOp::Elu:
      return where(x > 0, g, g * (y + p.a));
    case UnaryOp::LeakyRelu:
      return where(x > 0, g, g * p.a);
    case UnaryOp::Clamp: {
      Tensor keep = ones_like(x, TensorOptions().dtype(kBool).device(x.device()));
      if (p.has_a) keep = logical_and(keep, x >= p.a);
      if (p.has_b) keep = logical_and(keep, x <= p.b);
      return g * mask_of(keep, g);
    }
    case UnaryOp::PowScalar:
      if (p.a == 0.0) return zeros_like(g);
      return g * x.pow(p.a - 1) * p.a;
    default:
      return zeros_like(g);
  }
}

bool saves_input(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
    case UnaryOp::Exp:
    case UnaryOp::Exp2:
    case UnaryOp::Expm1:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal:
    case UnaryOp::Tan:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Relu:
      return false;
    default:
      return true;
  }
}

bool saves_output(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Exp2:
    case UnaryOp::Expm1:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal:
    case UnaryOp::Tan:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Relu:
    case UnaryOp::Elu:
      return true;
    default:
      return false;
  }
}

}  // namespace

void record_unary(UnaryOp op, const Tensor& x, const Tensor& out, const ElementwiseParams& p) {
  if (!is_floating_point(out.dtype())) return;
  const bool si = saves_input(op), so = saves_output(op);
  TensorList saved;
  if (si) saved.push_back(x);
  if (so) saved.push_back(out);
  autograd::record(unary_name(op), {x}, {out}, saved,
                   [op, p, si, so](const TensorList& g, const GradContext& c) {
                     Tensor xs = si ? c.saved[0] : Tensor();
                     Tensor ys = so ? c.saved[si ? 1 : 0] : Tensor();
                     return TensorList{unary_grad(op, g[0], xs, ys, p)};
                   });
}

namespace {

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "AddBackward0";
    case BinaryOp::Sub:
      return "SubBackward0";
    case BinaryOp::Mul:
      return "MulBackward0";
    case BinaryOp::Div:
      return "DivBackward0";
    case BinaryOp::DivTrunc:
    case BinaryOp::DivFloor:
      return "DivBackward2";
    case BinaryOp::Pow:
      return "PowBackward1";
    case BinaryOp::Maximum:
      return "MaximumBackward0";
    case BinaryOp::Minimum:
      return "MinimumBackward0";
    case BinaryOp::Fmod:
      return "FmodBackward1";
    case BinaryOp::Remainder:
      return "RemainderBackward1";
    case BinaryOp::Atan2:
      return "Atan2Backward0";
    case BinaryOp::ReluBackward:
      return "ThresholdBackwardBackward0";
    default:
      return "BinaryBackward";
  }
}

}  // namespace

void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                   const ElementwiseParams& p) {
  if (!is_floating_point(out.dtype())) return;
  const bool linear = op == BinaryOp::Add || op == BinaryOp::Sub;
  TensorList saved;
  if (!linear) saved = {a, b};
  if (op == BinaryOp::Pow) saved.push_back(out);
  Shape sa = a.sizes(), sb = b.sizes();
  autograd::record(
      binary_name(op), {a, b}, {out}, saved,
      [op, p, sa, sb](const TensorList& gs, const GradContext& c) -> TensorList {
        const Tensor& g = gs[0];
        Tensor ga, gb;
        Tensor x = c.saved.size() > 0 ? c.saved[0] : Tensor();
        Tensor y = c.saved.size() > 1 ? c.saved[1] : Tensor();
        switch (op) {
          case BinaryOp::Add:
            ga = g;
            gb = p.a == 1.0 ? g : g * p.a;
            break;
          case BinaryOp::Sub:
            ga = g;
            gb = g * -p.a;
            break;
          case BinaryOp::Mul:
            if (c.needs(0)) ga = g * y;
            if (c.needs(1)) gb = g * x;
            break;
          case BinaryOp::Div:
            if (c.needs(0)) ga = g / y;
            if (c.needs(1)) gb = -g * x / (y * y);
            break;
          case BinaryOp::Pow: {
            const Tensor& out = c.saved[2];
            if (c.needs(0)) ga = where(y == 0, zeros_like(g), g * y * x.pow(y - 1));
            if (c.needs(1)) {
              gb = where(logical_and(x == 0, y >= 0), zeros_like(g), g * out * log(x));
            }
            break;
          }
          case BinaryOp::Maximum:
          case BinaryOp::Minimum: {
            // Ties share the gradient evenly, as in PyTorch.
            Tensor wins = op == BinaryOp::Maximum ? x > y : x < y;
            Tensor w = where(x == y, full_like(g, 0.5), wins.to(g.dtype()));
            ga = g * w;
            gb = g * (1 - w);
            break;
          }
          case BinaryOp::Fmod:
            ga = g;
            if (c.needs(1)) gb = -g * div(x, y, "trunc");
            break;
          case BinaryOp::Remainder:
            ga = g;
            if (c.needs(1)) gb = -g * div(x, y, "floor");
            break;
          case BinaryOp::Atan2: {
            Tensor den = x * x + y * y;
            if (c.needs(0)) ga = g * y / den;
            if (c.needs(1)) gb = g * -x / den;
            break;
          }
          case BinaryOp::ReluBackward:  // linear in the gradient, piecewise constant in the result
            if (c.needs(0)) ga = relu_backward(g, y);
            if (c.needs(1)) gb = zeros_like(g);
            break;
          default:  // rounding divisions: piecewise constant
            ga = zeros_like(g);
            gb = zeros_like(g);
        }
        return {c.needs(0) && ga.defined() ? sum_to(ga, sa) : Tensor(),
                c.needs(1) && gb.defined() ? sum_to(gb, sb) : Tensor()};
      });
}

void record_ternary(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& t,
                    const Tensor& out, const ElementwiseParams& p) {
  if (!is_floating_point(out.dtype())) return;
  Shape sa = a.sizes(), sb = b.sizes(), st = t.sizes();
  const char* name = op == TernaryOp::Lerp      ? "LerpBackward1"
                     : op == TernaryOp::Addcmul ? "AddcmulBackward0"
                     : op == TernaryOp::Addcdiv ? "AddcdivBackward0"
                                                : "ClampBackward0";
  autograd::record(
      name, {a, b, t}, {out}, {a, b, t},
      [op, p, sa, sb, st](const TensorList& gs, const GradContext& c) -> TensorList {
        const Tensor& g = gs[0];
        const Tensor &x = c.saved[0], &y = c.saved[1], &z = c.saved[2];
        Tensor ga, gb, gt;
        switch (op) {
          case TernaryOp::Lerp:  // x + z * (y - x)
            ga = g * (1 - z);
            gb = g * z;
            if (c.needs(2)) gt = g * (y - x);
            break;
          case TernaryOp::Addcmul:  // x + v * y * z
            ga = g;
            if (c.needs(1)) gb = g * z * p.a;
            if (c.needs(2)) gt = g * y * p.a;
            break;
          case TernaryOp::Addcdiv:  // x + v * y / z
            ga = g;
            if (c.needs(1)) gb = g * p.a / z;
            if (c.needs(2)) gt = -g * p.a * y / (z * z);
            break;
          default: {  // clamp(x, lo, hi) = min(max(x, lo), hi): the last bound applied wins
            TensorOptions bools = TensorOptions().dtype(kBool).device(x.device());
            Tensor raised = p.has_a ? maximum(x, y) : x;
            Tensor hi_hit = p.has_b ? raised > z : zeros_like(x, bools);
            Tensor lo_hit =
                p.has_a ? logical_and(x < y, logical_not(hi_hit)) : zeros_like(x, bools);
            ga = g * logical_not(logical_or(lo_hit, hi_hit)).to(g.dtype());
            if (p.has_a) gb = g * lo_hit.to(g.dtype());
            if (p.has_b) gt = g * hi_hit.to(g.dtype());
          }
        }
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
