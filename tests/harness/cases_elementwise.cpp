// Harness cases: unary, binary and ternary element-wise ops, in-place forms, casts and copies.
#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/harness.h"
#include "ops/elementwise_grad.h"

namespace ember::harness {
namespace {

using F1 = std::function<double(double)>;
using F2 = std::function<double(double, double)>;

// Integer results wrap to the dtype's width, as the kernels do.
double wrap(double v, DType t) {
  switch (t) {
    case kUInt8:
      return static_cast<double>(static_cast<uint8_t>(static_cast<int64_t>(v)));
    case kInt8:
      return static_cast<double>(static_cast<int8_t>(static_cast<int64_t>(v)));
    case kInt32:
      return static_cast<double>(static_cast<int32_t>(static_cast<int64_t>(v)));
    case kBool:
      return v != 0 ? 1.0 : 0.0;
    default:
      return v;
  }
}

void unary_case(const std::string& name, std::vector<DType> dtypes, Fill fill,
                std::function<Tensor(const Tensor&)> fn, F1 ref, bool wraps = false) {
  register_case({name,
                 std::move(dtypes),
                 {{{3, 5}, fill}},
                 [fn](const TensorList& in) { return TensorList{fn(in[0])}; },
                 [ref, wraps](const std::vector<Ref>& in, DType dt) {
                   Ref r = ref_unary(in[0], ref);
                   if (wraps)
                     for (double& v : r.data) v = wrap(v, dt);
                   return std::vector<Ref>{r};
                 }});
}

void binary_case(const std::string& name, std::vector<DType> dtypes, Fill fa, Fill fb,
                 std::function<Tensor(const Tensor&, const Tensor&)> fn, F2 ref, bool wraps = false,
                 Shape sa = {2, 3, 4}, Shape sb = {3, 1}) {
  register_case({name,
                 std::move(dtypes),
                 {{sa, fa}, {sb, fb}},
                 [fn](const TensorList& in) { return TensorList{fn(in[0], in[1])}; },
                 [ref, wraps](const std::vector<Ref>& in, DType dt) {
                   Ref r = ref_binary(in[0], in[1], ref);
                   if (wraps)
                     for (double& v : r.data) v = wrap(v, dt);
                   return std::vector<Ref>{r};
                 }});
}

// A unary case on normal values mixed with infinities, NaN and signed zeros (as the dtype holds
// them: integers and bool get their casts).
void special_values_case(const std::string& name, std::function<Tensor(const Tensor&)> fn, F1 ref) {
  register_case(
      {name,
       all_dtypes(),
       {},
       [fn](const TensorList& in) { return TensorList{fn(in[0])}; },
       [ref](const std::vector<Ref>& in, DType) { return std::vector<Ref>{ref_unary(in[0], ref)}; },
       -1,
       [](DType dt, std::mt19937& rng) {
         const double inf = std::numeric_limits<double>::infinity();
         std::vector<double> v = {inf, -inf, std::nan(""), 0.0, -0.0, 65504.0, 1e300};
         std::normal_distribution<double> normal(0.0, 4.0);
         while (v.size() < 15) v.push_back(normal(rng));
         std::shuffle(v.begin(), v.end(), rng);
         return TensorList{tensor(v, Shape{3, 5}).to(dt)};
       }});
}

double gelu_tanh(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}
double py_mod(double a, double b) {
  double m = std::fmod(a, b);
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}

EMBER_HARNESS_CASES {
  const auto floats = float_dtypes();
  const auto numeric = numeric_dtypes();
  const auto all = all_dtypes();
  const auto signed_numeric =
      std::vector<DType>{kInt8, kInt32, kInt64, kFloat16, kBFloat16, kFloat32, kFloat64};

  // ---- unary ----
  unary_case(
      "neg", numeric, Fill::Normal, [](const Tensor& x) { return neg(x); },
      [](double x) { return -x; }, true);
  unary_case(
      "abs", signed_numeric, Fill::Normal, [](const Tensor& x) { return abs(x); },
      [](double x) { return std::fabs(x); });
  unary_case(
      "sign", all, Fill::Normal, [](const Tensor& x) { return sign(x); },
      [](double x) { return double((x > 0) - (x < 0)); });
  unary_case(
      "exp", numeric, Fill::Unit, [](const Tensor& x) { return exp(x); }, F1(::exp));
  unary_case(
      "exp2", numeric, Fill::Unit, [](const Tensor& x) { return exp2(x); }, F1(::exp2));
  unary_case(
      "log", floats, Fill::Positive, [](const Tensor& x) { return log(x); }, F1(::log));
  unary_case(
      "log2", floats, Fill::Positive, [](const Tensor& x) { return log2(x); }, F1(::log2));
  unary_case(
      "log1p", floats, Fill::Positive, [](const Tensor& x) { return log1p(x); }, F1(::log1p));
  unary_case(
      "expm1", floats, Fill::Unit, [](const Tensor& x) { return expm1(x); }, F1(::expm1));
  unary_case(
      "sqrt", floats, Fill::Positive, [](const Tensor& x) { return sqrt(x); }, F1(::sqrt));
  unary_case(
      "rsqrt", floats, Fill::Positive, [](const Tensor& x) { return rsqrt(x); },
      [](double x) { return 1 / std::sqrt(x); });
  unary_case(
      "reciprocal", floats, Fill::NonZero, [](const Tensor& x) { return reciprocal(x); },
      [](double x) { return 1 / x; });
  unary_case(
      "sin", numeric, Fill::Normal, [](const Tensor& x) { return sin(x); }, F1(::sin));
  unary_case(
      "cos", numeric, Fill::Normal, [](const Tensor& x) { return cos(x); }, F1(::cos));
  unary_case(
      "tan", floats, Fill::Unit, [](const Tensor& x) { return tan(x); }, F1(::tan));
  unary_case(
      "tanh", numeric, Fill::Normal, [](const Tensor& x) { return tanh(x); }, F1(::tanh));
  unary_case(
      "sigmoid", numeric, Fill::Normal, [](const Tensor& x) { return sigmoid(x); },
      [](double x) { return 1 / (1 + std::exp(-x)); });
  unary_case(
      "erf", floats, Fill::Normal, [](const Tensor& x) { return erf(x); }, F1(::erf));
  unary_case(
      "relu", numeric, Fill::Normal, [](const Tensor& x) { return relu(x); },
      [](double x) { return x > 0 ? x : 0; });
  unary_case(
      "gelu", floats, Fill::Normal, [](const Tensor& x) { return gelu(x); },
      [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); });
  unary_case(
      "gelu_tanh", floats, Fill::Normal, [](const Tensor& x) { return gelu(x, "tanh"); },
      gelu_tanh);
  unary_case(
      "silu", floats, Fill::Normal, [](const Tensor& x) { return silu(x); },
      [](double x) { return x / (1 + std::exp(-x)); });
  unary_case(
      "softplus", floats, Fill::Normal, [](const Tensor& x) { return softplus(x, 2.0, 1.0); },
      [](double x) { return x * 2 > 1 ? x : std::log1p(std::exp(2 * x)) / 2; });
  unary_case(
      "elu", floats, Fill::Normal, [](const Tensor& x) { return elu(x, 0.7); },
      [](double x) { return x > 0 ? x : 0.7 * std::expm1(x); });
  unary_case(
      "leaky_relu", floats, Fill::Normal, [](const Tensor& x) { return leaky_relu(x, 0.1); },
      [](double x) { return x > 0 ? x : 0.1 * x; });
  unary_case(
      "floor", numeric, Fill::Wide, [](const Tensor& x) { return floor(x); }, F1(::floor));
  unary_case(
      "ceil", numeric, Fill::Wide, [](const Tensor& x) { return ceil(x); }, F1(::ceil));
  unary_case(
      "round", numeric, Fill::Wide, [](const Tensor& x) { return round(x); }, F1(::nearbyint));
  unary_case(
      "trunc", numeric, Fill::Wide, [](const Tensor& x) { return trunc(x); }, F1(::trunc));
  unary_case(
      "logical_not", all, Fill::Small, [](const Tensor& x) { return logical_not(x); },
      [](double x) { return double(x == 0); });
  unary_case(
      "bitwise_not", integer_dtypes(), Fill::Normal, [](const Tensor& x) { return bitwise_not(x); },
      [](double x) { return double(~static_cast<int64_t>(x)); }, true);
  register_case({"bitwise_not_bool",
                 {kBool},
                 {{{7}, Fill::Bool}},
                 [](const TensorList& in) { return TensorList{bitwise_not(in[0])}; },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_unary(in[0], [](double x) { return double(x == 0); })};
                 }});
  unary_case(
      "isnan", floats, Fill::Normal, [](const Tensor& x) { return isnan(log(x)); },
      [](double x) { return double(x < 0); });
  special_values_case(
      "isinf", [](const Tensor& x) { return isinf(x); },
      [](double x) { return double(std::isinf(x)); });
  special_values_case(
      "isfinite", [](const Tensor& x) { return isfinite(x); },
      [](double x) { return double(std::isfinite(x)); });
  unary_case(
      "pow_scalar", floats, Fill::Positive, [](const Tensor& x) { return pow(x, 1.7); },
      [](double x) { return std::pow(x, 1.7); });
  unary_case(
      "pow_scalar_int", integer_dtypes(), Fill::Small, [](const Tensor& x) { return pow(x, 3); },
      [](double x) { return x * x * x; }, true);
  unary_case(
      "clamp", numeric, Fill::Normal, [](const Tensor& x) { return clamp(x, -1, 2); },
      [](double x) { return std::min(std::max(x, -1.0), 2.0); }, true);
  unary_case(
      "clamp_min", floats, Fill::Normal,
      [](const Tensor& x) { return clamp(x, 0.5, std::nullopt); },
      [](double x) { return std::max(x, 0.5); });

  // ---- binary ----
  binary_case(
      "add", numeric, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return add(a, b, 2); },
      [](double a, double b) { return a + 2 * b; }, true);
  binary_case(
      "add_bool", {kBool}, Fill::Bool, Fill::Bool,
      [](const Tensor& a, const Tensor& b) { return add(a, b); },
      [](double a, double b) { return double(a || b); });
  binary_case(
      "sub", numeric, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return sub(a, b); },
      [](double a, double b) { return a - b; }, true);
  binary_case(
      "mul", all, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return mul(a, b); },
      [](double a, double b) { return a * b; }, true);
  binary_case(
      "div", numeric, Fill::Normal, Fill::NonZero,
      [](const Tensor& a, const Tensor& b) { return div(a, b); },
      [](double a, double b) { return a / b; });
  binary_case(
      "div_trunc", numeric, Fill::Wide, Fill::NonZero,
      [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); },
      [](double a, double b) { return std::trunc(a / b); }, true);
  binary_case(
      "div_floor", numeric, Fill::Wide, Fill::NonZero,
      [](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); },
      [](double a, double b) { return std::floor(a / b); }, true);
  binary_case(
      "pow", floats, Fill::Positive, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return pow(a, b); },
      [](double a, double b) { return std::pow(a, b); });
  binary_case(
      "pow_int", integer_dtypes(), Fill::Small, Fill::Small,
      [](const Tensor& a, const Tensor& b) { return pow(a, b); },
      [](double a, double b) { return std::pow(a, b); }, true);
  binary_case(
      "maximum", numeric, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
      [](double a, double b) { return std::max(a, b); });
  binary_case(
      "minimum", numeric, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return minimum(a, b); },
      [](double a, double b) { return std::min(a, b); });
  binary_case(
      "fmod", numeric, Fill::Wide, Fill::NonZero,
      [](const Tensor& a, const Tensor& b) { return fmod(a, b); }, F2(::fmod));
  binary_case(
      "remainder", numeric, Fill::Wide, Fill::NonZero,
      [](const Tensor& a, const Tensor& b) { return remainder(a, b); }, py_mod);
  binary_case(
      "atan2", floats, Fill::Normal, Fill::Normal,
      [](const Tensor& a, const Tensor& b) { return atan2(a, b); }, F2(::atan2));
  binary_case("logaddexp", numeric, Fill::Wide, Fill::Wide, logaddexp,
              [](double a, double b) { return std::log(std::exp(a) + std::exp(b)); });
  register_gradcheck("logaddexp");
  binary_case("logaddexp2", numeric, Fill::Wide, Fill::Wide, logaddexp2,
              [](double a, double b) { return std::log2(std::exp2(a) + std::exp2(b)); });
  register_gradcheck("logaddexp2");
  // Infinities, NaN and magnitudes whose exp overflows (through the Tensor methods): the
  // reference shifts by the larger operand, and equal infinities are their own sum.
  for (bool base2 : {false, true}) {
    register_case(
        {base2 ? "logaddexp2_special" : "logaddexp_special",
         floats,
         {},
         [base2](const TensorList& in) {
           return TensorList{base2 ? in[0].logaddexp2(in[1]) : in[0].logaddexp(in[1])};
         },
         [base2](const std::vector<Ref>& in, DType) {
           return std::vector<Ref>{ref_binary(in[0], in[1], [base2](double a, double b) {
             const double m = std::max(a, b);
             if (std::isnan(a) || std::isnan(b)) return std::nan("");
             if (std::isinf(m)) return m;
             return base2 ? m + std::log2(std::exp2(a - m) + std::exp2(b - m))
                          : m + std::log(std::exp(a - m) + std::exp(b - m));
           })};
         },
         -1,
         [](DType dt, std::mt19937&) {
           const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
           std::vector<double> a = {-inf, inf, -inf, inf, -inf, 3,  1000, -1000,
                                    1000, nan, 1,    nan, 0,    88, -0.5, 20};
           std::vector<double> b = {-inf,  inf, inf, -inf, 2, -inf, 1000, -1000,
                                    -1000, 1,   nan, inf,  0, 90,   0.25, -30};
           return TensorList{tensor(a, Shape{2, 8}).to(dt), tensor(b, Shape{2, 8}).to(dt)};
         }});
  }
  // ReLU's backward (grad, result): one fused pass, also on CUDA through the shared functor.
  binary_case(
      "relu_backward", floats, Fill::Normal, Fill::Normal,
      [](const Tensor& g, const Tensor& y) { return relu_backward(g, y); },
      [](double g, double y) { return y > 0 ? g : 0.0; }, false, {2, 3, 4}, {2, 3, 4});
  struct Cmp {
    const char* name;
    Tensor (*fn)(const Tensor&, const Tensor&);
    F2 ref;
  };
  for (const Cmp& c : std::vector<Cmp>{
           {"eq", eq, [](double a, double b) { return double(a == b); }},
           {"ne", ne, [](double a, double b) { return double(a != b); }},
           {"lt", lt, [](double a, double b) { return double(a < b); }},
           {"le", le, [](double a, double b) { return double(a <= b); }},
           {"gt", gt, [](double a, double b) { return double(a > b); }},
           {"ge", ge, [](double a, double b) { return double(a >= b); }},
           {"logical_and", logical_and, [](double a, double b) { return double(a && b); }},
           {"logical_or", logical_or, [](double a, double b) { return double(a || b); }},
           {"logical_xor", logical_xor,
            [](double a, double b) { return double((a != 0) != (b != 0)); }},
       }) {
    binary_case(c.name, all, Fill::Small, Fill::Small, c.fn, c.ref);
  }
  auto as_int = [](double v) { return static_cast<int64_t>(v); };
  binary_case(
      "bitwise_and", integer_dtypes(true), Fill::Normal, Fill::Normal, bitwise_and,
      [as_int](double a, double b) { return double(as_int(a) & as_int(b)); }, true);
  binary_case(
      "bitwise_or", integer_dtypes(true), Fill::Normal, Fill::Normal, bitwise_or,
      [as_int](double a, double b) { return double(as_int(a) | as_int(b)); }, true);
  binary_case(
      "bitwise_xor", integer_dtypes(true), Fill::Normal, Fill::Normal, bitwise_xor,
      [as_int](double a, double b) { return double(as_int(a) ^ as_int(b)); }, true);
  binary_case(
      "bitwise_left_shift", integer_dtypes(), Fill::Small, Fill::Small, bitwise_left_shift,
      [as_int](double a, double b) { return double(as_int(a) << as_int(b)); }, true);
  binary_case(
      "bitwise_right_shift", integer_dtypes(), Fill::Normal, Fill::Small, bitwise_right_shift,
      [as_int](double a, double b) { return double(as_int(a) >> as_int(b)); }, true);

  // Scalars: a Python-style float does not raise a float16 tensor; an int keeps integers.
  unary_case(
      "add_scalar", numeric, Fill::Normal, [](const Tensor& x) { return x + 3; },
      [](double x) { return x + 3; }, true);
  unary_case(
      "mul_float_scalar", numeric, Fill::Normal, [](const Tensor& x) { return x * 0.5; },
      [](double x) { return x * 0.5; });
  unary_case(
      "rsub_scalar", signed_numeric, Fill::Normal, [](const Tensor& x) { return 2 - x; },
      [](double x) { return 2 - x; });

  // ---- ternary ----
  register_case({"where",
                 all,
                 {{{4, 1}, Fill::Bool, kBool}, {{4, 5}}, {{5}}},
                 [](const TensorList& in) { return TensorList{where(in[0], in[1], in[2])}; },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_ternary(in[0], in[1], in[2],
                                   [](double c, double a, double b) { return c != 0 ? a : b; })};
                 }});
  register_case({"masked_fill",
                 all,
                 {{{4, 5}}, {{5}, Fill::Bool, kBool}},
                 [](const TensorList& in) { return TensorList{masked_fill(in[0], in[1], 1)}; },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{ref_binary(
                       in[0], in[1], [](double x, double m) { return m != 0 ? 1.0 : x; })};
                 }});
  register_case({"clamp_tensor",
                 numeric,
                 {{{3, 4}}, {{4}}, {{3, 1}, Fill::Positive}},
                 [](const TensorList& in) {
                   return TensorList{
                       clamp(in[0], std::optional<Tensor>(in[1]), std::optional<Tensor>(in[2]))};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_ternary(in[0], in[1], in[2], [](double x, double lo, double hi) {
                         return std::min(std::max(x, lo), hi);
                       })};
                 }});
  register_case({"lerp",
                 floats,
                 {{{3, 4}}, {{3, 4}}, {{4}, Fill::Unit}},
                 [](const TensorList& in) { return TensorList{lerp(in[0], in[1], in[2])}; },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_ternary(in[0], in[1], in[2],
                                   [](double s, double e, double w) { return s + w * (e - s); })};
                 }});
  register_case({"addcmul",
                 numeric,
                 {{{3, 4}}, {{3, 4}}, {{4}}},
                 [](const TensorList& in) { return TensorList{addcmul(in[0], in[1], in[2], 2)}; },
                 [](const std::vector<Ref>& in, DType dt) {
                   Ref r = ref_ternary(in[0], in[1], in[2],
                                       [](double x, double a, double b) { return x + 2 * a * b; });
                   for (double& v : r.data) v = wrap(v, dt);
                   return std::vector<Ref>{r};
                 }});
  register_case({"addcdiv",
                 floats,
                 {{{3, 4}}, {{3, 4}}, {{4}, Fill::NonZero}},
                 [](const TensorList& in) { return TensorList{addcdiv(in[0], in[1], in[2], 0.5)}; },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_ternary(in[0], in[1], in[2],
                                   [](double x, double a, double b) { return x + 0.5 * a / b; })};
                 }});

  // ---- in place (on the runner's own copies, so non-contiguous outputs are exercised) ----
  register_case({"add_",
                 numeric,
                 {{{3, 4}}, {{4}}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.add_(in[1]);
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   Ref r = ref_binary(in[0], in[1], [](double a, double b) { return a + b; });
                   for (double& v : r.data) v = wrap(v, dt);
                   return std::vector<Ref>{r};
                 }});
  register_case({"mul_",
                 numeric,
                 {{{3, 4}}, {{3, 1}}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.mul_(in[1]);
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType dt) {
                   Ref r = ref_binary(in[0], in[1], [](double a, double b) { return a * b; });
                   for (double& v : r.data) v = wrap(v, dt);
                   return std::vector<Ref>{r};
                 }});
  register_case({"exp_",
                 floats,
                 {{{3, 4}, Fill::Unit}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.exp_();
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{ref_unary(in[0], F1(::exp))};
                 }});
  register_case({"fill_",
                 all,
                 {{{3, 4}}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.fill_(1);
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{ref_unary(in[0], [](double) { return 1.0; })};
                 }});
  register_case({"zero_",
                 all,
                 {{{3, 4}}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.zero_();
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{ref_unary(in[0], [](double) { return 0.0; })};
                 }});

  // ---- copies and casts ----
  for (DType target : all_dtypes()) {
    register_case({"to_" + std::string(dtype_name(target)),
                   all,
                   {{{3, 4}, Fill::Wide}},
                   [target](const TensorList& in) { return TensorList{in[0].to(target)}; },
                   [target](const std::vector<Ref>& in, DType dt) {
                     Ref r = in[0];
                     for (double& v : r.data) {
                       if (target == kBool) {
                         v = v != 0;
                       } else if (is_integral(target)) {
                         v = wrap(std::trunc(v), target);
                       }
                     }
                     // Round through the target's precision (16-bit floats).
                     Tensor t = tensor(r.data, Shape{r.numel()}).to(target).to(kFloat64);
                     r.data = t.to_vector<double>();
                     return std::vector<Ref>{r};
                   }});
  }
  register_case({"contiguous_permute",
                 all,
                 {{{2, 3, 4}}},
                 [](const TensorList& in) {
                   return TensorList{in[0].permute({2, 0, 1}).contiguous()};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref r(Shape{4, 2, 3}, {});
                   for_each_index(r.shape, [&](const std::vector<int64_t>& i) {
                     r.data.push_back(in[0].at({i[1], i[2], i[0]}));
                   });
                   return std::vector<Ref>{r};
                 }});
  register_case({"expand_clone",
                 all,
                 {{{3, 1}}},
                 [](const TensorList& in) {
                   return TensorList{in[0].expand({2, 3, 4}).clone()};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   Ref r(Shape{2, 3, 4}, {});
                   for_each_index(r.shape, [&](const std::vector<int64_t>& i) {
                     r.data.push_back(in[0].at(i));
                   });
                   return std::vector<Ref>{r};
                 }});
  register_case({"copy_",
                 all,
                 {{{3, 4}}, {{4}}},
                 [](const TensorList& in) {
                   Tensor x = in[0];
                   x.copy_(in[1]);
                   return TensorList{x};
                 },
                 [](const std::vector<Ref>& in, DType) {
                   return std::vector<Ref>{
                       ref_binary(in[0], in[1], [](double, double b) { return b; })};
                 }});
}

}  // namespace
}  // namespace ember::harness
