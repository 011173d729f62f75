// Which harness cases autograd checks against finite differences, and cases for ops whose
// forward has no case elsewhere (views, split/chunk, conversions, softmax with a dtype).
#include "harness/harness.h"

namespace ember::harness {
namespace {

// A view-like op: the reference copies values through an index map of the same op on doubles.
void view_case(const std::string& name, Shape in, std::function<Tensor(const Tensor&)> fn) {
  register_case({name,
                 float_dtypes(),
                 {{in}},
                 [fn](const TensorList& x) { return TensorList{fn(x[0]).contiguous()}; },
                 [fn, in](const std::vector<Ref>& r, DType) {
                   Tensor t = tensor(r[0].data, in, kFloat64);
                   return std::vector<Ref>{Ref(fn(t))};
                 }});
  register_gradcheck(name);
}

EMBER_HARNESS_CASES {
  // ---- element-wise ----
  for (const char* n : {"neg",          "abs",
                        "exp",          "exp2",
                        "log",          "log2",
                        "log1p",        "expm1",
                        "sqrt",         "rsqrt",
                        "reciprocal",   "sin",
                        "cos",          "tan",
                        "tanh",         "sigmoid",
                        "erf",          "relu",
                        "gelu",         "gelu_tanh",
                        "silu",         "softplus",
                        "elu",          "leaky_relu",
                        "pow_scalar",   "clamp",
                        "clamp_min",    "add",
                        "sub",          "mul",
                        "div",          "pow",
                        "maximum",      "minimum",
                        "fmod",         "remainder",
                        "atan2",        "relu_backward",
                        "add_scalar",   "mul_float_scalar",
                        "rsub_scalar",  "where",
                        "masked_fill",  "clamp_tensor",
                        "lerp",         "addcmul",
                        "addcdiv",      "add_",
                        "mul_",         "exp_",
                        "fill_",        "zero_",
                        "to_float64",   "contiguous_permute",
                        "expand_clone", "copy_"}) {
    register_gradcheck(n);
  }
  // Piecewise constant: the gradient is zero (away from the jumps, which random inputs miss).
  for (const char* n : {"sign", "floor", "ceil", "round", "trunc", "div_trunc", "div_floor"}) {
    register_gradcheck(n);
  }
  // ---- reductions, scans, softmax ----
  for (const char* n :
       {"sum",       "mean",      "prod",      "amax",      "amin",     "max",
        "min",       "max_dim",   "min_dim",   "var",       "std",      "var_mean",
        "norm_p2.0", "norm_p1.0", "norm_p3.0", "norm_p0.5", "norm_inf", "norm_neginf",
        "norm_p0.0", "logsumexp", "cumsum",    "cumprod",   "softmax",  "log_softmax"}) {
    register_gradcheck(n);
  }
  // ---- linear algebra ----
  for (const char* n :
       {"mm", "bmm", "matmul", "matmul_fold", "matmul_vector", "dot", "addmm", "linear", "outer"}) {
    register_gradcheck(n);
  }
  // ---- joining, indexing, sorting ----
  for (const char* n :
       {"cat", "stack", "index_select", "gather", "scatter", "scatter_add", "index", "index_put",
        "masked_select", "embedding", "sort", "topk", "tril", "triu"}) {
    register_gradcheck(n);
  }

  // ---- views without a case of their own ----
  view_case("view", {3, 4}, [](const Tensor& x) { return x.contiguous().view({2, 6}); });
  view_case("reshape_copy", {3, 4}, [](const Tensor& x) { return x.t().reshape({12}); });
  view_case("transpose", {2, 3, 4}, [](const Tensor& x) { return x.transpose(0, 2); });
  view_case("permute", {2, 3, 4}, [](const Tensor& x) { return x.permute({1, 2, 0}); });
  view_case("squeeze_unsqueeze", {3, 1, 4},
            [](const Tensor& x) { return x.squeeze(1).unsqueeze(0).unsqueeze(-1); });
  view_case("expand", {3, 1}, [](const Tensor& x) { return x.expand({2, 3, 4}); });
  view_case("narrow", {4, 5}, [](const Tensor& x) { return x.narrow(1, 1, 3); });
  view_case("slice_step", {6, 5}, [](const Tensor& x) { return x.slice(0, 1, 6, 2); });
  view_case("select", {4, 5}, [](const Tensor& x) { return x.select(1, 2); });
  view_case("flatten", {2, 3, 4}, [](const Tensor& x) { return x.flatten(1); });
  view_case("movedim", {2, 3, 4}, [](const Tensor& x) { return x.movedim(0, 2); });
  view_case("as_strided", {4, 5}, [](const Tensor& x) {
    Tensor c = x.contiguous();
    return c.as_strided({2, 3}, {5, 2}, c.storage_offset() + 1);
  });
  view_case("split_chunk", {6, 4}, [](const Tensor& x) {
    TensorList s = x.split(4);
    TensorList c = x.chunk(2, 1);
    return cat({s[1].flatten(), c[0].flatten() * 2, x.unbind(0)[3]});
  });

  // ---- in place on a view: the base's history goes through CopySlices ----
  register_case({"inplace_view",
                 float_dtypes(),
                 {{{3, 4}}, {{4}}},
                 [](const TensorList& in) {
                   Tensor y = in[0] * 1;
                   y.select(0, 1).mul_(in[1]);
                   y.narrow(1, 0, 2).add_(in[1].narrow(0, 1, 2));
                   return TensorList{y};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref r = in[0];
                   for (int64_t j = 0; j < 4; ++j) r.data[4 + j] *= in[1].data[j];
                   for (int64_t i = 0; i < 3; ++i) {
                     for (int64_t j = 0; j < 2; ++j) r.data[i * 4 + j] += in[1].data[1 + j];
                   }
                   return std::vector<Ref>{r};
                 }});
  register_gradcheck("inplace_view");
}

}  // namespace
}  // namespace ember::harness
