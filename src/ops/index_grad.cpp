// Derivatives of joining, indexing and sorting, written with ember ops (they run on the
// gradient's device and can be differentiated again).
#include "ops/index_grad.h"

#include "autograd/function.h"
#include "ops/op_utils.h"

namespace ember::grad_ops {

using autograd::GradContext;
using autograd::no_grad;
using autograd::record;
using autograd::sum_to;

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
