// Reduction, scan and softmax math written once for host and device (EMBER_HD): accumulator
// functors with init / reduce / combine / project, usable by a sequential loop or a block tree.
// The reductions themselves are listed in reduce_ops.def (enum, dispatch, functor per op).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ember/macros.h"
#include "kernels/op_table.h"

namespace ember {

// ---- the reduction table (reduce_ops.def) ------------------------------------------------------

enum class ReduceOp : uint8_t {
#define EMBER_REDUCE_OP(Enum, ...) Enum,
#include "kernels/reduce_ops.def"
};

// Every reduction, in table order.
inline constexpr ReduceOp kReduceOps[] = {
#define EMBER_REDUCE_OP(Enum, ...) ReduceOp::Enum,
#include "kernels/reduce_ops.def"
};

// One row of the table as data.
struct ReduceOpInfo {
  const char* name;  // the op harness case of the row
  DTypeClass dtypes;
  Grad grad;
};

constexpr ReduceOpInfo reduce_info(ReduceOp op) {
  switch (op) {
#define EMBER_REDUCE_OP(Enum, name, dtypes, grad, ...) \
  case ReduceOp::Enum:                                 \
    return {name, DTypeClass::dtypes, Grad::grad};
#include "kernels/reduce_ops.def"
  }
  return {"unknown", DTypeClass::Any, Grad::None};
}

// Reductions defined only for floating inputs (the op layer promotes or rejects the rest).
constexpr bool reduce_float_only(ReduceOp op) { return !admits<int64_t>(reduce_info(op).dtypes); }

enum class ScanOp : uint8_t { CumSum, CumProd };

// Outputs have the input's dtype, except: Any/All write bool (or uint8 for uint8 inputs), and
// Sum/Prod may read integer or bool inputs straight into an int64 output.
//
// Parameters some reductions take: the norm order and the variance correction (dof offset).
struct ReduceParams {
  double p = 2.0;
  int64_t correction = 1;
};

namespace rd {

template <class C>
EMBER_HD inline bool is_nan(C x) {
  if constexpr (std::is_floating_point_v<C>)
    return x != x;
  else
    return false;
}

// c ? a : b without a branch. For floats the select goes through the bits: GCC (trapping math)
// will not vectorise a float compare-and-select feeding more arithmetic, but does this.
template <class T>
EMBER_HD inline T pick(bool c, T a, T b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    U ua, ub;
    std::memcpy(&ua, &a, sizeof(T));
    std::memcpy(&ub, &b, sizeof(T));
    const U m = U(0) - static_cast<U>(c);
    const U r = (ua & m) | (ub & ~m);
    T out;
    std::memcpy(&out, &r, sizeof(T));
    return out;
  } else {
    return c ? a : b;
  }
}

// max / min where a NaN wins (PyTorch's propagation).
template <class C>
EMBER_HD inline C nan_max(C a, C x) {
  return pick((x > a) | is_nan(x), x, a);
}
template <class C>
EMBER_HD inline C nan_min(C a, C x) {
  return pick((x < a) | is_nan(x), x, a);
}

template <class C>
EMBER_HD inline C abs_val(C x) {
  if constexpr (std::is_floating_point_v<C>)
    return std::fabs(x);
  else
    return x < C(0) ? C(-x) : x;
}

// Accumulators: floats in double, integers (and bool) in int64. A device backend may pick float
// for speed; the functors only need A to be arithmetic.
template <class C>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<C>, double, int64_t>;

// Each functor: A init(); A reduce(A, C x); A combine(A, A) (a holds earlier elements);
// R project(A). `n` is the number of reduced elements (for means and variances).

template <class C, class A = sum_acc_t<C>>
struct SumOp {
  using acc_t = A;
  EMBER_HD SumOp(double = 2.0, int64_t = 1, int64_t = 0) {}
  EMBER_HD A init() const { return A(0); }
  EMBER_HD A reduce(A a, C x) const { return combine(a, static_cast<A>(x)); }
  EMBER_HD A combine(A a, A b) const {
    if constexpr (std::is_integral_v<A>) {  // wraps like PyTorch, without signed-overflow UB
      return static_cast<A>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
    } else {
      return a + b;
    }
  }
  EMBER_HD A project(A a) const { return a; }
};

template <class C, class A = sum_acc_t<C>>
struct ProdOp {
  using acc_t = A;
  EMBER_HD ProdOp(double = 2.0, int64_t = 1, int64_t = 0) {}
  EMBER_HD A init() const { return A(1); }
  EMBER_HD A reduce(A a, C x) const {
    if constexpr (std::is_integral_v<A>) {  // wraps like PyTorch, without signed-overflow UB
      return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(static_cast<A>(x)));
    } else {
      return a * static_cast<A>(x);
    }
  }
  EMBER_HD A combine(A a, A b) const {
    if constexpr (std::is_integral_v<A>) {
      return static_cast<A>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  }
  EMBER_HD A project(A a) const { return a; }
};

template <class C, class A = double>
struct MeanOp {
  using acc_t = A;
  A n;
  EMBER_HD MeanOp(double = 2.0, int64_t = 1, int64_t count = 0) : n(static_cast<A>(count)) {}
  EMBER_HD A init() const { return A(0); }
  EMBER_HD A reduce(A a, C x) const { return a + static_cast<A>(x); }
  EMBER_HD A combine(A a, A b) const { return a + b; }
  EMBER_HD A project(A a) const { return a / n; }  // 0 / 0 = nan for an empty reduction
};

// max / min with NaN propagation (a NaN is the extreme, as in PyTorch).
template <class C, bool IsMax>
struct ExtremeOp {
  using acc_t = C;
  EMBER_HD ExtremeOp(double = 2.0, int64_t = 1, int64_t = 0) {}
  EMBER_HD C init() const {
    if constexpr (std::is_floating_point_v<C>) {
      return IsMax ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::infinity();
    } else {
      return IsMax ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
    }
  }
  EMBER_HD C reduce(C a, C x) const {
    if constexpr (IsMax)
      return nan_max(a, x);
    else
      return nan_min(a, x);
  }
  EMBER_HD C combine(C a, C b) const { return reduce(a, b); }
  EMBER_HD C project(C a) const { return a; }
};

template <class C, bool IsAny>
struct AnyAllOp {
  using acc_t = bool;
  EMBER_HD AnyAllOp(double = 2.0, int64_t = 1, int64_t = 0) {}
  EMBER_HD bool init() const { return !IsAny; }
  EMBER_HD bool reduce(bool a, C x) const {
    if constexpr (IsAny)
      return a | (x != C(0));
    else
      return a & (x != C(0));
  }
  EMBER_HD bool combine(bool a, bool b) const { return IsAny ? (a | b) : (a & b); }
  EMBER_HD bool project(bool a) const { return a; }
};

// Vector norms over |x|. Kind: 0 count of non-zeros, 1 sum |x|, 2 sqrt(sum x^2),
// 3 max |x|, 4 min |x|, 5 (sum |x|^p)^(1/p).
template <class C, int Kind, class A = double>
struct NormOp {
  using acc_t = A;
  A p, inv_p;
  EMBER_HD NormOp(double p_ = 2.0, int64_t = 1, int64_t = 0)
      : p(static_cast<A>(p_)), inv_p(static_cast<A>(1.0 / p_)) {}
  EMBER_HD A init() const {
    if constexpr (Kind == 4)
      return std::numeric_limits<A>::infinity();
    else
      return A(0);
  }
  EMBER_HD A reduce(A a, C x) const {
    const A v = static_cast<A>(x);
    if constexpr (Kind == 0)
      return a + (v != A(0) ? A(1) : A(0));
    else if constexpr (Kind == 1)
      return a + std::fabs(v);
    else if constexpr (Kind == 2)
      return a + v * v;
    else if constexpr (Kind == 3)
      return nan_max(a, std::fabs(v));
    else if constexpr (Kind == 4)
      return nan_min(a, std::fabs(v));
    else
      return a + std::pow(std::fabs(v), p);
  }
  EMBER_HD A combine(A a, A b) const {
    if constexpr (Kind == 3)
      return nan_max(a, b);
    else if constexpr (Kind == 4)
      return nan_min(a, b);
    else
      return a + b;
  }
  EMBER_HD A project(A a) const {
    if constexpr (Kind == 2)
      return std::sqrt(a);
    else if constexpr (Kind == 5)
      return std::pow(a, inv_p);
    else
      return a;
  }
};

// Welford / Chan: running mean and sum of squared deviations; project gives var or std.
template <class A>
struct WelfordAcc {
  A mean, m2, n;
};

template <class C, bool IsStd, class A = double>
struct VarOp {
  using acc_t = WelfordAcc<A>;
  A correction;
  EMBER_HD VarOp(double = 2.0, int64_t corr = 1, int64_t = 0) : correction(static_cast<A>(corr)) {}
  EMBER_HD acc_t init() const { return {A(0), A(0), A(0)}; }
  EMBER_HD acc_t reduce(acc_t a, C x) const {
    const A v = static_cast<A>(x);
    a.n += A(1);
    const A delta = v - a.mean;
    a.mean += delta / a.n;
    a.m2 += delta * (v - a.mean);
    return a;
  }
  EMBER_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.n == A(0)) return b;
    if (b.n == A(0)) return a;
    const A n = a.n + b.n;
    const A delta = b.mean - a.mean;
    const A wb = b.n / n;
    return {a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.n * wb, n};
  }
  EMBER_HD A project(acc_t a) const {
    // PyTorch: divisor max(n - correction, 0); 0/0 = nan, x/0 = inf.
    const A divisor = a.n > correction ? a.n - correction : A(0);
    const A var = a.m2 / divisor;
    if constexpr (IsStd)
      return std::sqrt(var);
    else
      return var;
  }
};

// Online log-sum-exp: the running max and the sum of exp(x - max). All -inf gives -inf, any
// +inf gives +inf, any NaN gives NaN.
template <class A>
struct LseAcc {
  A max, sum;
};

template <class C, class A = double>
struct LogSumExpOp {
  using acc_t = LseAcc<A>;
  EMBER_HD LogSumExpOp(double = 2.0, int64_t = 1, int64_t = 0) {}
  EMBER_HD acc_t init() const { return {-std::numeric_limits<A>::infinity(), A(0)}; }
  EMBER_HD acc_t reduce(acc_t a, C x) const {
    const A v = static_cast<A>(x);
    if (v != v) {
      a.sum = v;
    } else if (v > a.max) {  // rescale; max - v is -inf or finite negative, never NaN
      a.sum = a.sum * std::exp(a.max - v) + A(1);
      a.max = v;
    } else if (v != -std::numeric_limits<A>::infinity() &&
               a.max != std::numeric_limits<A>::infinity()) {
      a.sum += std::exp(v - a.max);
    }
    return a;
  }
  EMBER_HD acc_t combine(acc_t a, acc_t b) const {
    const A inf = std::numeric_limits<A>::infinity();
    if (a.sum != a.sum || b.sum != b.sum) return {a.max, a.sum != a.sum ? a.sum : b.sum};
    const A m = a.max > b.max ? a.max : b.max;
    if (m == -inf) return {m, A(0)};
    if (m == inf) return {m, A(1)};
    return {m, a.sum * std::exp(a.max - m) + b.sum * std::exp(b.max - m)};
  }
  EMBER_HD A project(acc_t a) const { return std::log(a.sum) + a.max; }
};

// ---- arg reductions: the value and index of the first extreme element (NaN counts as extreme) ---

template <class C>
struct ArgAcc {
  C value;
  int64_t index;  // -1: nothing seen yet
};

// Whether x replaces best (strictly better, so ties keep the earlier element). Branch-free.
template <class C, bool IsMax>
EMBER_HD inline bool arg_better(C x, C best) {
  return (!is_nan(best)) & (is_nan(x) | (IsMax ? x > best : x < best));
}

template <class C, bool IsMax>
struct ArgOp {
  using acc_t = ArgAcc<C>;
  EMBER_HD acc_t init() const { return {C(0), -1}; }
  EMBER_HD acc_t reduce(acc_t a, C x, int64_t i) const {
    if (a.index < 0 || arg_better<C, IsMax>(x, a.value)) return {x, i};
    return a;
  }
  // Order-free: ties (and two NaNs) go to the lower index.
  EMBER_HD acc_t combine(acc_t a, acc_t b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    if (arg_better<C, IsMax>(b.value, a.value)) return b;
    if (arg_better<C, IsMax>(a.value, b.value)) return a;
    return b.index < a.index ? b : a;
  }
};

// ---- scans --------------------------------------------------------------------------------------

template <class C, ScanOp Op>
struct ScanFn {
  using acc_t = sum_acc_t<C>;
  EMBER_HD acc_t init() const { return Op == ScanOp::CumSum ? acc_t(0) : acc_t(1); }
  EMBER_HD acc_t step(acc_t a, C x) const {
    if constexpr (Op == ScanOp::CumSum) {
      if constexpr (std::is_integral_v<acc_t>) {
        return static_cast<acc_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(x));
      } else {
        return a + static_cast<acc_t>(x);
      }
    } else {
      if constexpr (std::is_integral_v<acc_t>) {
        return static_cast<acc_t>(static_cast<uint64_t>(a) *
                                  static_cast<uint64_t>(static_cast<acc_t>(x)));
      } else {
        return a * static_cast<acc_t>(x);
      }
    }
  }
};

// ---- exp for softmax ----------------------------------------------------------------------------
// Branch-free float exp (about 1 ulp) that compilers vectorise: k = round(x / ln2) by the
// 1.5 * 2^23 trick, a degree-6 polynomial on |r| <= ln2 / 2, and 2^k applied in two halves so
// results near the subnormal and overflow edges stay right. NaN stays NaN.
EMBER_HD inline float exp_f32(float x) {
  {  // clamp to [-104, 89] by bit select: a float select here stops GCC vectorising the loop
    const float lo = -104.0f, hi = 89.0f;
    uint32_t xb, lob, hib;
    std::memcpy(&xb, &x, 4);
    std::memcpy(&lob, &lo, 4);
    std::memcpy(&hib, &hi, 4);
    const uint32_t ml = 0u - static_cast<uint32_t>(x < lo);
    const uint32_t mh = 0u - static_cast<uint32_t>(x > hi);
    xb = (xb & ~(ml | mh)) | (lob & ml) | (hib & mh);
    std::memcpy(&x, &xb, 4);
  }
  const float magic = 12582912.0f;  // 1.5 * 2^23
  const float t = x * 1.44269504088896341f + magic;
  const float k = t - magic;
  uint32_t tb;
  std::memcpy(&tb, &t, 4);
  const int32_t ki = static_cast<int32_t>(tb - 0x4b400000u);  // k as an integer
  float r = x - k * 0.693359375f;                             // ln2 split: hi + lo
  r = r - k * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t k1 = ki >> 1;
  const int32_t k2 = ki - k1;
  const uint32_t b1 = static_cast<uint32_t>(k1 + 127) << 23;
  const uint32_t b2 = static_cast<uint32_t>(k2 + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, 4);
  std::memcpy(&s2, &b2, 4);
  return p * s1 * s2;
}

template <class C>
EMBER_HD inline C softmax_exp(C x) {
  if constexpr (std::is_same_v<C, float>)
    return exp_f32(x);
  else
    return std::exp(x);
}

}  // namespace rd

// visit_reduce(op, fn): calls fn(std::integral_constant<ReduceOp, op>{}).
template <class Fn>
decltype(auto) visit_reduce(ReduceOp op, Fn&& fn) {
  switch (op) {
#define EMBER_REDUCE_OP(Enum, ...) \
  case ReduceOp::Enum:             \
    return fn(std::integral_constant<ReduceOp, ReduceOp::Enum>{});
#include "kernels/reduce_ops.def"
  }
  return fn(std::integral_constant<ReduceOp, kReduceOps[0]>{});
}

// The functor for (op, compute type C): the table's functor column.
template <ReduceOp Op, class C>
struct reduce_functor;
#define EMBER_REDUCE_OP(Enum, name, dtypes, grad, ...) \
  template <class C>                                   \
  struct reduce_functor<ReduceOp::Enum, C> {           \
    using type = __VA_ARGS__;                          \
  };
#include "kernels/reduce_ops.def"
template <ReduceOp Op, class C>
using reduce_functor_t = typename reduce_functor<Op, C>::type;

}  // namespace ember
