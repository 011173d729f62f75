// Derivatives of reductions, scans, softmax, matmul, indexing, joining and sorting, written with
// ember ops (they run on the gradient's device and can be differentiated again).
#include "ops/grad_ops.h"

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

Tensor options_zeros(const Tensor& like) { return zeros(like.sizes(), like.options()); }

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

// ---- joining, indexing, sorting -----------------------------------------------------------------

Tensor cat(const TensorList& tensors, int64_t dim) {
  Tensor out = no_grad([&] { return ember::cat(tensors, dim); });
  int64_t d = wrap_dim("cat", dim, out.dim());
  std::vector<int64_t> lens;
  for (const Tensor& t : tensors) lens.push_back(t.dim() == 1 && t.numel() == 0 ? -1 : t.size(d));
  record("CatBackward0", tensors, {out}, {}, [d, lens](const TensorList& g, const GradContext& c) {
    TensorList r;
    int64_t off = 0;
    for (size_t i = 0; i < lens.size(); ++i) {
      if (lens[i] < 0) {  // a legacy empty 1-D input takes no part
        r.push_back(Tensor());
        continue;
      }
      r.push_back(c.needs(i) ? g[0].narrow(d, off, lens[i]) : Tensor());
      off += lens[i];
    }
    return r;
  });
  return out;
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor out = no_grad([&] { return ember::index_select(x, dim, index); });
  int64_t d = wrap_dim("index_select", dim, x.dim());
  Shape in = x.sizes();
  record("IndexSelectBackward0", {x}, {out}, {index},
         [d, in](const TensorList& g, const GradContext& c) {
           if (in.empty()) return TensorList{g[0].reshape(in)};
           // Each selected row adds into its source row (repeats accumulate).
           Shape view(in.size(), 1);
           view[static_cast<size_t>(d)] = -1;
           Tensor idx = c.saved[0].to(kInt64).reshape(view).expand(g[0].sizes());
           return TensorList{zeros(in, g[0].options()).scatter_add(d, idx, g[0])};
         });
  return out;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor out = no_grad([&] { return ember::gather(x, dim, index); });
  int64_t d = wrap_dim("gather", dim, x.dim());
  Shape in = x.sizes();
  record("GatherBackward0", {x}, {out}, {index},
         [d, in](const TensorList& g, const GradContext& c) {
           return TensorList{zeros(in, g[0].options()).scatter_add(d, c.saved[0], g[0])};
         });
  return out;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add) {
  Tensor out = no_grad([&] {
    return add ? ember::scatter_add(x, dim, index, src) : ember::scatter(x, dim, index, src);
  });
  int64_t d = wrap_dim("scatter", dim, x.dim());
  Shape ss = src.sizes();
  record(add ? "ScatterAddBackward0" : "ScatterBackward0", {x, src}, {out}, {index},
         [d, add, ss](const TensorList& g, const GradContext& c) {
           const Tensor& idx = c.saved[0];
           Tensor gx, gs;
           if (c.needs(0)) gx = add ? g[0] : ember::scatter(g[0], d, idx, Scalar(0.0));
           if (c.needs(1)) {
             // Only src's leading index-shaped block is read.
             gs = g[0].gather(d, idx);
             if (gs.sizes() != ss) {
               gs = autograd::embed(gs, ss, [&](const Tensor& z) {
                 Tensor r = z;
                 for (int64_t k = 0; k < idx.dim(); ++k) r = r.narrow(k, 0, idx.size(k));
                 return r;
               });
             }
           }
           return TensorList{gx, gs};
         });
  return out;
}

Tensor scatter_value(const Tensor& x, int64_t dim, const Tensor& index, Scalar value) {
  Tensor out = no_grad([&] { return ember::scatter(x, dim, index, value); });
  int64_t d = wrap_dim("scatter", dim, x.dim());
  record("ScatterBackward1", {x}, {out}, {index}, [d](const TensorList& g, const GradContext& c) {
    return TensorList{ember::scatter(g[0], d, c.saved[0], Scalar(0.0))};
  });
  return out;
}

Tensor index(const Tensor& x, const TensorList& indices) {
  Tensor out = no_grad([&] { return ember::index(x, indices); });
  Shape in = x.sizes();
  record("IndexBackward0", {x}, {out}, indices, [in](const TensorList& g, const GradContext& c) {
    return TensorList{ember::index_put(zeros(in, g[0].options()), c.saved, g[0], true)};
  });
  return out;
}

Tensor index_put(const Tensor& x, const TensorList& indices, const Tensor& values,
                 bool accumulate) {
  Tensor out = no_grad([&] { return ember::index_put(x, indices, values, accumulate); });
  Shape sv = values.sizes();
  record("IndexPutBackward0", {x, values}, {out}, indices,
         [sv, accumulate](const TensorList& g, const GradContext& c) {
           Tensor gx, gv;
           if (c.needs(0)) {
             gx = accumulate ? g[0]
                             : ember::index_put(g[0], c.saved, zeros({}, g[0].options()), false);
           }
           if (c.needs(1)) gv = sum_to(ember::index(g[0], c.saved), sv);
           return TensorList{gx, gv};
         });
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  Tensor out = no_grad([&] { return ember::embedding(weight, indices); });
  Shape sw = weight.sizes();
  record("EmbeddingBackward0", {weight}, {out}, {indices},
         [sw](const TensorList& g, const GradContext& c) {
           Tensor flat = c.saved[0].reshape({-1}).to(kInt64);
           return TensorList{ember::index_put(zeros(sw, g[0].options()), {flat},
                                              g[0].reshape({-1, sw[1]}), true)};
         });
  return out;
}

Tensor tril_triu(const Tensor& x, int64_t diagonal, bool upper) {
  Tensor out = no_grad([&] { return upper ? ember::triu(x, diagonal) : ember::tril(x, diagonal); });
  record(upper ? "TriuBackward0" : "TrilBackward0", {x}, {out}, {},
         [diagonal, upper](const TensorList& g, const GradContext&) {
           return TensorList{upper ? g[0].triu(diagonal) : g[0].tril(diagonal)};
         });
  return out;
}

namespace {
// Values picked along d by indices: their gradient goes back to where they came from.
void record_pick(const char* name, const Tensor& x, const Tensor& values, const Tensor& indices,
                 int64_t d) {
  Shape in = x.sizes();
  record(name, {x}, {values, indices}, {indices},
         [in, d](const TensorList& g, const GradContext& c) {
           if (in.empty()) return TensorList{g[0].reshape(in)};
           return TensorList{zeros(in, g[0].options()).scatter(d, c.saved[0], g[0])};
         });
}
}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  auto [v, i] = no_grad([&] { return ember::sort(x, dim, descending, stable); });
  record_pick("SortBackward0", x, v, i, wrap_dim("sort", dim, x.dim()));
  return {v, i};
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  auto [v, i] = no_grad([&] { return ember::topk(x, k, dim, largest, sorted); });
  record_pick("TopkBackward0", x, v, i, wrap_dim("topk", dim, x.dim()));
  return {v, i};
}

}  // namespace ember::grad_ops
