// Derivatives of the matmul family, written with ember ops (they run on the gradient's device and
// can be differentiated again).
#include "ops/linalg_grad.h"

#include "autograd/function.h"
#include "ops/op_utils.h"

namespace ember::grad_ops {

using autograd::GradContext;
using autograd::no_grad;
using autograd::record;
using autograd::sum_to;

// ---- matmul family ------------------------------------------------------------------------------

Tensor mm(const Tensor& a, const Tensor& b) {
  Tensor out = no_grad([&] { return ember::mm(a, b); });
  record("MmBackward0", {a, b}, {out}, {a, b}, [](const TensorList& g, const GradContext& c) {
    return TensorList{c.needs(0) ? g[0].mm(c.saved[1].t()) : Tensor(),
                      c.needs(1) ? c.saved[0].t().mm(g[0]) : Tensor()};
  });
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  Tensor out = no_grad([&] { return ember::bmm(a, b); });
  record("BmmBackward0", {a, b}, {out}, {a, b}, [](const TensorList& g, const GradContext& c) {
    return TensorList{c.needs(0) ? g[0].bmm(c.saved[1].transpose(1, 2)) : Tensor(),
                      c.needs(1) ? c.saved[0].transpose(1, 2).bmm(g[0]) : Tensor()};
  });
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  Tensor out = no_grad([&] { return ember::matmul(a, b); });
  record("MatmulBackward0", {a, b}, {out}, {a, b}, [](const TensorList& g, const GradContext& c) {
    const Tensor &x = c.saved[0], &y = c.saved[1];
    if (x.dim() == 1 && y.dim() == 1) {
      return TensorList{c.needs(0) ? g[0] * y : Tensor(), c.needs(1) ? g[0] * x : Tensor()};
    }
    // Lift vectors to matrices, differentiate the batched product, fold broadcast batch dims.
    Tensor A = x.dim() == 1 ? x.unsqueeze(0) : x;
    Tensor B = y.dim() == 1 ? y.unsqueeze(-1) : y;
    Tensor G = g[0];
    if (x.dim() == 1) G = G.unsqueeze(-2);
    if (y.dim() == 1) G = G.unsqueeze(-1);
    Tensor ga, gb;
    if (c.needs(0)) ga = sum_to(G.matmul(B.transpose(-1, -2)), A.sizes()).reshape(x.sizes());
    if (c.needs(1)) gb = sum_to(A.transpose(-1, -2).matmul(G), B.sizes()).reshape(y.sizes());
    return TensorList{ga, gb};
  });
  return out;
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
  Tensor out = no_grad([&] { return ember::addmm(input, a, b, beta, alpha); });
  double be = beta.to_double(), al = alpha.to_double();
  Shape si = input.sizes();
  record("AddmmBackward0", {input, a, b}, {out}, {a, b},
         [be, al, si](const TensorList& g, const GradContext& c) {
           return TensorList{c.needs(0) ? sum_to(g[0] * be, si) : Tensor(),
                             c.needs(1) ? g[0].mm(c.saved[1].t()) * al : Tensor(),
                             c.needs(2) ? c.saved[0].t().mm(g[0]) * al : Tensor()};
         });
  return out;
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  Tensor out = no_grad([&] { return ember::linear(x, weight, bias); });
  Shape sb = bias.defined() ? bias.sizes() : Shape{};
  record("LinearBackward0", {x, weight, bias}, {out}, {x, weight},
         [sb](const TensorList& g, const GradContext& c) {
           const Tensor &xs = c.saved[0], &w = c.saved[1];
           Tensor gx, gw, gbias;
           if (w.dim() == 1) {  // (*, in) . (in) -> (*)
             Tensor gu = g[0].unsqueeze(-1);
             if (c.needs(0)) gx = gu * w;
             if (c.needs(1)) gw = sum_to(gu * xs, w.sizes());
           } else {
             const int64_t in = xs.size(-1), outf = w.size(0);
             if (c.needs(0)) gx = g[0].matmul(w);
             if (c.needs(1)) gw = g[0].reshape({-1, outf}).t().mm(xs.reshape({-1, in}));
           }
           if (c.needs(2)) gbias = sum_to(g[0], sb);
           return TensorList{gx, gw, gbias};
         });
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  Tensor out = no_grad([&] { return ember::dot(a, b); });
  record("DotBackward0", {a, b}, {out}, {a, b}, [](const TensorList& g, const GradContext& c) {
    return TensorList{c.needs(0) ? g[0] * c.saved[1] : Tensor(),
                      c.needs(1) ? g[0] * c.saved[0] : Tensor()};
  });
  return out;
}

}  // namespace ember::grad_ops
