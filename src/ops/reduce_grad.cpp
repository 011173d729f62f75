// Derivatives of reductions, scans and softmax, written with ember ops (they run on the
// gradient's device and can be differentiated again).
#include "ops/reduce_grad.h"

#include <cmath>
#include <limits>

#include "autograd/function.h"
#include "ops/op_utils.h"

namespace ember::grad_ops {

using autograd::GradContext;
using autograd::no_grad;
using autograd::record;
using autograd::sum_to;

namespace {

// The input's shape with size 1 on the reduced dims.
Shape keep_shape(const Tensor& x, const std::vector<int64_t>& dims) {
  Shape s = x.sizes();
  for (int64_t d : wrap_dims("autograd", dims, x.dim())) s[static_cast<size_t>(d)] = 1;
  return s;
}

// A reduction's gradient (or output) broadcast back over the reduced dims.
Tensor unreduce(const Tensor& g, const Shape& keep, const Shape& in) {
  return g.reshape(keep).expand(in);
}

// Reverses dim d (index_select with a descending index).
Tensor flip(const Tensor& t, int64_t d) {
  int64_t n = t.size(d);
  Tensor idx = arange(n - 1, -1, -1, TensorOptions().dtype(kInt64).device(t.device()));
  return t.index_select(d, idx);
}

// Product of the elements before each one along d (1 for the first).
Tensor exclusive_cumprod(const Tensor& x, int64_t d) {
  int64_t n = x.size(d);
  Shape one = x.sizes();
  one[static_cast<size_t>(d)] = 1;
  Tensor ones_part = ones(one, x.options());
  if (n <= 1) return ones_part.expand(x.sizes()).contiguous();
  return ember::cat({ones_part, ember::cumprod(x.narrow(d, 0, n - 1), d)}, d);
}

// d prod / d x_i = product of the others (correct with zeros, no division).
Tensor prod_others(const Tensor& x, int64_t d) {
  return exclusive_cumprod(x, d) * flip(exclusive_cumprod(flip(x, d), d), d);
}

}  // namespace

// ---- reductions ---------------------------------------------------------------------------------

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
           std::optional<DType> dtype) {
  Tensor out = no_grad([&] { return ember::sum(x, dims, keepdim, dtype); });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  record("SumBackward1", {x}, {out}, {}, [keep, in](const TensorList& g, const GradContext&) {
    return TensorList{unreduce(g[0], keep, in)};
  });
  return out;
}

Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor out = no_grad([&] { return ember::mean(x, dims, keepdim); });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  double count =
      static_cast<double>(x.numel()) / static_cast<double>(std::max<int64_t>(keep.numel(), 1));
  record("MeanBackward1", {x}, {out}, {},
         [keep, in, count](const TensorList& g, const GradContext&) {
           return TensorList{unreduce(g[0], keep, in) / count};
         });
  return out;
}

Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  Tensor out = no_grad([&] { return ember::prod(x, dim, keepdim); });
  Shape in = x.sizes();
  std::optional<int64_t> d =
      dim ? std::optional<int64_t>(wrap_dim("prod", *dim, x.dim())) : std::nullopt;
  Shape keep = keep_shape(x, d ? std::vector<int64_t>{*d} : std::vector<int64_t>{});
  record(
      "ProdBackward0", {x}, {out}, {x}, [keep, in, d](const TensorList& g, const GradContext& c) {
        const Tensor& xs = c.saved[0];
        if (xs.numel() == 0) return TensorList{zeros(in, g[0].options())};
        Tensor others =
            d && xs.dim() > 0 ? prod_others(xs, *d) : prod_others(xs.reshape({-1}), 0).reshape(in);
        return TensorList{unreduce(g[0], keep, in) * others};
      });
  return out;
}

Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max,
            const char* name) {
  Tensor out = no_grad(
      [&] { return is_max ? ember::amax(x, dims, keepdim) : ember::amin(x, dims, keepdim); });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  std::vector<int64_t> rd = wrap_dims("amax", dims, x.dim());
  record(name, {x}, {out}, {x, out}, [keep, in, rd](const TensorList& g, const GradContext& c) {
    // Ties share the gradient evenly.
    Tensor mask = (c.saved[0] == unreduce(c.saved[1], keep, in)).to(g[0].dtype());
    Tensor count = rd.empty() ? mask : mask.sum(rd, true);
    return TensorList{unreduce(g[0], keep, in) * mask / count.expand(in)};
  });
  return out;
}

std::tuple<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  auto [values, indices] =
      no_grad([&] { return is_max ? ember::max(x, dim, keepdim) : ember::min(x, dim, keepdim); });
  int64_t d = wrap_dim("max", dim, x.dim());
  Shape keep = keep_shape(x, {d}), in = x.sizes();
  record(is_max ? "MaxBackward0" : "MinBackward0", {x}, {values, indices}, {indices},
         [keep, in, d](const TensorList& g, const GradContext& c) {
           if (in.empty()) return TensorList{g[0].reshape(in)};
           return TensorList{
               zeros(in, g[0].options()).scatter(d, c.saved[0].reshape(keep), g[0].reshape(keep))};
         });
  return {values, indices};
}

Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim,
           bool is_std) {
  Tensor out = no_grad([&] {
    return is_std ? ember::std(x, dims, correction, keepdim)
                  : ember::var(x, dims, correction, keepdim);
  });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  std::vector<int64_t> rd = wrap_dims("var", dims, x.dim());
  double n =
      static_cast<double>(x.numel()) / static_cast<double>(std::max<int64_t>(keep.numel(), 1));
  double denom = std::max(n - static_cast<double>(correction), 0.0);
  record(is_std ? "StdBackward0" : "VarBackward0", {x}, {out}, {x, out},
         [keep, in, rd, denom, is_std](const TensorList& g, const GradContext& c) {
           const Tensor& xs = c.saved[0];
           Tensor centered = xs - (rd.empty() ? xs : xs.mean(rd, true));
           Tensor gk = unreduce(g[0], keep, in);
           if (is_std) return TensorList{gk * centered / (unreduce(c.saved[1], keep, in) * denom)};
           return TensorList{gk * centered * (2.0 / denom)};
         });
  return out;
}

Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor out = no_grad([&] { return ember::norm(x, p, dims, keepdim); });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  std::vector<int64_t> rd = wrap_dims("norm", dims, x.dim());
  record("NormBackward1", {x}, {out}, {x, out},
         [keep, in, rd, p](const TensorList& g, const GradContext& c) {
           const Tensor& xs = c.saved[0];
           Tensor nk = unreduce(c.saved[1], keep, in), gk = unreduce(g[0], keep, in);
           const double inf = std::numeric_limits<double>::infinity();
           if (p == 0) return TensorList{zeros_like(xs)};
           if (p == 1) return TensorList{gk * sign(xs)};
           if (p == inf || p == -inf) {
             Tensor mask = (abs(xs) == nk).to(xs.dtype());
             Tensor count = rd.empty() ? mask : mask.sum(rd, true);
             return TensorList{gk * sign(xs) * mask / count.expand(in)};
           }
           Tensor scale = p == 2 ? xs / nk : xs * abs(xs).pow(p - 2) / nk.pow(p - 1);
           return TensorList{gk * where(nk == 0, zeros_like(xs), scale)};
         });
  return out;
}

Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor out = no_grad([&] { return ember::logsumexp(x, dims, keepdim); });
  Shape keep = keep_shape(x, dims), in = x.sizes();
  record("LogsumexpBackward0", {x}, {out}, {x, out},
         [keep, in](const TensorList& g, const GradContext& c) {
           return TensorList{unreduce(g[0], keep, in) *
                             exp(c.saved[0] - unreduce(c.saved[1], keep, in))};
         });
  return out;
}

Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor out = no_grad([&] { return ember::cumsum(x, dim, dtype); });
  int64_t d = wrap_dim("cumsum", dim, x.dim());
  record("CumsumBackward0", {x}, {out}, {}, [d](const TensorList& g, const GradContext&) {
    if (g[0].dim() == 0) return TensorList{g[0]};
    return TensorList{flip(ember::cumsum(flip(g[0], d), d), d)};
  });
  return out;
}

Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype) {
  Tensor out = no_grad([&] { return ember::cumprod(x, dim, dtype); });
  int64_t d = wrap_dim("cumprod", dim, x.dim());
  record("CumprodBackward0", {x}, {out}, {x, out}, [d](const TensorList& g, const GradContext& c) {
    if (g[0].dim() == 0) return TensorList{g[0]};
    // d out_j / d x_i = out_j / x_i for j >= i (inputs without zeros).
    Tensor rev = flip(ember::cumsum(flip(g[0] * c.saved[1], d), d), d);
    return TensorList{rev / c.saved[0]};
  });
  return out;
}

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype, bool log) {
  Tensor out = no_grad(
      [&] { return log ? ember::log_softmax(x, dim, dtype) : ember::softmax(x, dim, dtype); });
  int64_t d = wrap_dim("softmax", dim, x.dim());
  std::vector<int64_t> rd = x.dim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{d};
  record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", {x}, {out}, {out},
         [rd, log](const TensorList& g, const GradContext& c) {
           const Tensor& y = c.saved[0];
           if (rd.empty()) return TensorList{zeros_like(g[0])};
           if (log) return TensorList{g[0] - exp(y) * g[0].sum(rd, true)};
           return TensorList{y * (g[0] - (g[0] * y).sum(rd, true))};
         });
  return out;
}

}  // namespace ember::grad_ops
