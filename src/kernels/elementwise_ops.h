// Element-wise ops: the op table's enums, dispatch and dtype support (generated from
// elementwise_ops.def), and the math written once for host and device (EMBER_HD). Backends
// instantiate the functors through visit_unary / visit_binary / visit_ternary.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/macros.h"
#include "kernels/op_table.h"

namespace ember {

// ---- the op table (elementwise_ops.def) ---------------------------------------------------------

// One row of the table as data, for the op layer, autograd and the tests that enumerate ops.
struct ElementwiseOpInfo {
  const char* name;  // PyTorch's name (with a variant suffix); also the op harness case's name
  DTypeClass dtypes;
  bool returns_bool;
  Grad grad;
  const char* node;  // the autograd node's name; nullptr when not differentiable
  Saved saved;
};

enum class UnaryOp : uint8_t {
#define EMBER_UNARY_OP(Enum, ...) Enum,
#include "kernels/elementwise_ops.def"
};

enum class BinaryOp : uint8_t {
#define EMBER_BINARY_OP(Enum, ...) Enum,
#include "kernels/elementwise_ops.def"
};

enum class TernaryOp : uint8_t {
#define EMBER_TERNARY_OP(Enum, ...) Enum,
#include "kernels/elementwise_ops.def"
};

// Every op of each family, in table order.
inline constexpr UnaryOp kUnaryOps[] = {
#define EMBER_UNARY_OP(Enum, ...) UnaryOp::Enum,
#include "kernels/elementwise_ops.def"
};
inline constexpr BinaryOp kBinaryOps[] = {
#define EMBER_BINARY_OP(Enum, ...) BinaryOp::Enum,
#include "kernels/elementwise_ops.def"
};
inline constexpr TernaryOp kTernaryOps[] = {
#define EMBER_TERNARY_OP(Enum, ...) TernaryOp::Enum,
#include "kernels/elementwise_ops.def"
};

// op_info(op): the op's row; the derivative column becomes (grad, node, saved).
#define EMBER_OP_RESULT_Same false
#define EMBER_OP_RESULT_Bool true
#define EMBER_OP_INFO(Family, Enum, name, dtypes, result, ...) \
  case Family::Enum:                                           \
    return {#name, DTypeClass::dtypes, EMBER_OP_RESULT_##result, __VA_ARGS__};
constexpr ElementwiseOpInfo kUnknownOp = {"unknown",  DTypeClass::Any, false,
                                          Grad::None, nullptr,         Saved::Nothing};

constexpr ElementwiseOpInfo op_info(UnaryOp op) {
  switch (op) {
#define EMBER_GRAD(node, saved, ...) Grad::Formula, node, Saved::saved
#define EMBER_ZERO_GRAD(node) Grad::Zero, node, Saved::Nothing
#define EMBER_NO_GRAD Grad::None, nullptr, Saved::Nothing
#define EMBER_UNARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_OP_INFO(UnaryOp, Enum, name, dtypes, result, derivative)
#include "kernels/elementwise_ops.def"
  }
  return kUnknownOp;
}
constexpr ElementwiseOpInfo op_info(BinaryOp op) {
  switch (op) {
#define EMBER_GRAD(node, saved, ...) Grad::Formula, node, Saved::saved
#define EMBER_ZERO_GRAD(node) Grad::Zero, node, Saved::Nothing
#define EMBER_NO_GRAD Grad::None, nullptr, Saved::Nothing
#define EMBER_BINARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_OP_INFO(BinaryOp, Enum, name, dtypes, result, derivative)
#include "kernels/elementwise_ops.def"
  }
  return kUnknownOp;
}
constexpr ElementwiseOpInfo op_info(TernaryOp op) {
  switch (op) {
#define EMBER_GRAD(node, saved, ...) Grad::Formula, node, Saved::saved
#define EMBER_ZERO_GRAD(node) Grad::Zero, node, Saved::Nothing
#define EMBER_NO_GRAD Grad::None, nullptr, Saved::Nothing
#define EMBER_TERNARY_OP(Enum, name, dtypes, result, api, derivative) \
  EMBER_OP_INFO(TernaryOp, Enum, name, dtypes, result, derivative)
#include "kernels/elementwise_ops.def"
  }
  return kUnknownOp;
}
#undef EMBER_OP_INFO
#undef EMBER_OP_RESULT_Same
#undef EMBER_OP_RESULT_Bool

// Ops whose result is bool whatever the input dtype.
constexpr bool returns_bool(UnaryOp op) { return op_info(op).returns_bool; }
constexpr bool returns_bool(BinaryOp op) { return op_info(op).returns_bool; }
constexpr bool returns_bool(TernaryOp op) { return op_info(op).returns_bool; }

// Which (op, compute type) pairs a kernel is instantiated for: the op's dtype class decides.
template <UnaryOp Op, class T>
inline constexpr bool unary_supports = admits<T>(op_info(Op).dtypes);
template <BinaryOp Op, class T>
inline constexpr bool binary_supports = admits<T>(op_info(Op).dtypes);
template <TernaryOp Op, class T>
inline constexpr bool ternary_supports = admits<T>(op_info(Op).dtypes);

// A row without a gradient must have no floating result, and a row with one must have one.
constexpr bool grad_matches_result(const ElementwiseOpInfo& i) {
  const bool integer_result =
      i.returns_bool || i.dtypes == DTypeClass::Integral || i.dtypes == DTypeClass::IntegerOnly;
  return (i.grad == Grad::None) == integer_result && (i.grad == Grad::None) == (i.node == nullptr);
}
template <class Op, size_t N>
constexpr bool table_is_consistent(const Op (&ops)[N]) {
  for (Op op : ops) {
    if (!grad_matches_result(op_info(op))) return false;
  }
  return true;
}
static_assert(table_is_consistent(kUnaryOps) && table_is_consistent(kBinaryOps) &&
                  table_is_consistent(kTernaryOps),
              "elementwise_ops.def: EMBER_NO_GRAD is for ops with bool or integer results only, "
              "and every other row needs EMBER_GRAD or EMBER_ZERO_GRAD");

// Op parameters: alpha of add/sub, slopes, softplus beta/threshold, clamp bounds, addcmul value.
struct ElementwiseParams {
  double a = 0.0;
  double b = 0.0;
  bool has_a = true;  // clamp: whether min (a) / max (b) were given
  bool has_b = true;
};

namespace ew {

template <class T>
inline constexpr bool is_fp = std::is_floating_point_v<T>;

template <class T>
EMBER_HD inline T sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// Python-style floor division for integers; never traps (x / 0 gives 0, INT_MIN / -1 wraps).
template <class T>
EMBER_HD inline T int_div_trunc(T a, T b) {
  if (b == 0) return T(0);
  if constexpr (std::is_signed_v<T>) {
    if (b == T(-1)) return static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a));
  }
  return a / b;
}
template <class T>
EMBER_HD inline T int_div_floor(T a, T b) {
  T q = int_div_trunc(a, b);
  if constexpr (std::is_signed_v<T>) {
    // The remainder is a - q * b (exact: |q * b| <= |a|), so one division serves both: a 64-bit
    // division is a long subroutine on a GPU.
    if (b != 0 && b != T(-1) && a != q * b && ((a < 0) != (b < 0))) --q;
  }
  return q;
}
template <class T>
EMBER_HD inline T int_mod(T a, T b) {  // C fmod for integers
  if (b == 0 || (std::is_signed_v<T> && b == T(-1))) return T(0);
  return a % b;
}

template <UnaryOp Op, class T>
EMBER_HD inline auto unary(T x, const ElementwiseParams& p) {
  constexpr bool fp = is_fp<T>;
  if constexpr (Op == UnaryOp::Neg) {
    if constexpr (std::is_unsigned_v<T>)
      return static_cast<T>(T(0) - x);
    else
      return static_cast<T>(-x);
  } else if constexpr (Op == UnaryOp::Abs) {
    if constexpr (fp)
      return std::fabs(x);
    else if constexpr (std::is_unsigned_v<T>)
      return x;
    else
      return static_cast<T>(x < 0 ? -x : x);
  } else if constexpr (Op == UnaryOp::Sign) {
    if constexpr (std::is_same_v<T, bool>)
      return x;
    else if constexpr (fp)
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : (x == T(0) ? T(0) : x));
    else
      return static_cast<T>((T(0) < x) - (x < T(0)));
  } else if constexpr (Op == UnaryOp::Exp) {
    return std::exp(x);
  } else if constexpr (Op == UnaryOp::Exp2) {
    return std::exp2(x);
  } else if constexpr (Op == UnaryOp::Log) {
    return std::log(x);
  } else if constexpr (Op == UnaryOp::Log2) {
    return std::log2(x);
  } else if constexpr (Op == UnaryOp::Log1p) {
    return std::log1p(x);
  } else if constexpr (Op == UnaryOp::Expm1) {
    return std::expm1(x);
  } else if constexpr (Op == UnaryOp::Sqrt) {
    return std::sqrt(x);
  } else if constexpr (Op == UnaryOp::Rsqrt) {
    return T(1) / std::sqrt(x);
  } else if constexpr (Op == UnaryOp::Reciprocal) {
    return T(1) / x;
  } else if constexpr (Op == UnaryOp::Sin) {
    return std::sin(x);
  } else if constexpr (Op == UnaryOp::Cos) {
    return std::cos(x);
  } else if constexpr (Op == UnaryOp::Tan) {
    return std::tan(x);
  } else if constexpr (Op == UnaryOp::Tanh) {
    return std::tanh(x);
  } else if constexpr (Op == UnaryOp::Sigmoid) {
    return sigmoid(x);
  } else if constexpr (Op == UnaryOp::Erf) {
    return std::erf(x);
  } else if constexpr (Op == UnaryOp::Relu) {
    if constexpr (fp)
      return x > T(0) ? x : (x == x ? T(0) : x);  // NaN propagates
    else
      return x > T(0) ? x : T(0);
  } else if constexpr (Op == UnaryOp::Gelu) {
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  } else if constexpr (Op == UnaryOp::GeluTanh) {
    const T k = T(0.79788456080286535588);  // sqrt(2 / pi)
    return T(0.5) * x * (T(1) + std::tanh(k * (x + T(0.044715) * x * x * x)));
  } else if constexpr (Op == UnaryOp::Silu) {
    return x / (T(1) + std::exp(-x));
  } else if constexpr (Op == UnaryOp::Softplus) {
    const T beta = T(p.a), threshold = T(p.b);
    return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
  } else if constexpr (Op == UnaryOp::Elu) {
    return x > T(0) ? x : T(p.a) * std::expm1(x);
  } else if constexpr (Op == UnaryOp::LeakyRelu) {
    return x > T(0) ? x : x * T(p.a);
  } else if constexpr (Op == UnaryOp::Floor) {
    if constexpr (fp)
      return std::floor(x);
    else
      return x;
  } else if constexpr (Op == UnaryOp::Ceil) {
    if constexpr (fp)
      return std::ceil(x);
    else
      return x;
  } else if constexpr (Op == UnaryOp::Round) {
    if constexpr (fp)
      return std::nearbyint(x);  // half to even under the default rounding mode
    else
      return x;
  } else if constexpr (Op == UnaryOp::Trunc) {
    if constexpr (fp)
      return std::trunc(x);
    else
      return x;
  } else if constexpr (Op == UnaryOp::LogicalNot) {
    return !static_cast<bool>(x);
  } else if constexpr (Op == UnaryOp::BitwiseNot) {
    if constexpr (std::is_same_v<T, bool>)
      return !x;
    else if constexpr (!fp)
      return static_cast<T>(~x);
    else
      return x;  // unreachable: the op layer rejects floats
  } else if constexpr (Op == UnaryOp::IsNan) {
    if constexpr (fp)
      return x != x;
    else
      return false;
  } else if constexpr (Op == UnaryOp::IsInf) {
    if constexpr (fp)
      return std::isinf(x);
    else
      return false;
  } else if constexpr (Op == UnaryOp::IsFinite) {
    if constexpr (fp)
      return std::isfinite(x);
    else
      return true;
  } else if constexpr (Op == UnaryOp::Clamp) {
    if constexpr (fp) {
      if (x != x) return x;
      T r = x;
      if (p.has_a && r < T(p.a)) r = T(p.a);
      if (p.has_b && r > T(p.b)) r = T(p.b);
      return r;
    } else {
      double r = static_cast<double>(x);
      if (p.has_a && r < p.a) r = p.a;
      if (p.has_b && r > p.b) r = p.b;
      return static_cast<T>(r);
    }
  } else if constexpr (Op == UnaryOp::PowScalar) {
    if constexpr (fp) {
      const T e = T(p.a);
      if (p.a == 1.0) return x;  // pow's gradient for x^2 asks for x^1; pow(x, 1) is x, NaN too
      if (p.a == 2.0) return x * x;
      if (p.a == 0.5) return std::sqrt(x);
      return std::pow(x, e);
    } else {
      // Integer power by squaring; negative exponents are rejected by the op layer.
      T r = 1, base = x;
      for (int64_t e = static_cast<int64_t>(p.a); e > 0; e >>= 1) {
        if (e & 1) r = static_cast<T>(r * base);
        base = static_cast<T>(base * base);
      }
      return r;
    }
  } else {
    static_assert(sizeof(T) == 0, "ew::unary: a UnaryOp of elementwise_ops.def has no branch");
  }
}

template <BinaryOp Op, class T>
EMBER_HD inline auto binary(T a, T b, const ElementwiseParams& p) {
  constexpr bool fp = is_fp<T>;
  if constexpr (Op == BinaryOp::Add) {
    if constexpr (std::is_same_v<T, bool>)
      return static_cast<bool>(a || b);
    else
      return static_cast<T>(a + static_cast<T>(p.a) * b);
  } else if constexpr (Op == BinaryOp::Sub) {
    return static_cast<T>(a - static_cast<T>(p.a) * b);
  } else if constexpr (Op == BinaryOp::Mul) {
    if constexpr (std::is_same_v<T, bool>)
      return static_cast<bool>(a && b);
    else
      return static_cast<T>(a * b);
  } else if constexpr (Op == BinaryOp::Div) {
    return a / b;  // floats only: integers are promoted by the op layer
  } else if constexpr (Op == BinaryOp::DivTrunc) {
    if constexpr (fp)
      return std::trunc(a / b);
    else
      return int_div_trunc(a, b);
  } else if constexpr (Op == BinaryOp::DivFloor) {
    if constexpr (fp) {
      if (b == T(0)) return a / b;
      T mod = std::fmod(a, b);
      T div = (a - mod) / b;
      if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
      T floordiv;
      if (div != T(0)) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
      } else {
        floordiv = std::copysign(T(0), a / b);
      }
      return floordiv;
    } else {
      return int_div_floor(a, b);
    }
  } else if constexpr (Op == BinaryOp::Pow) {
    if constexpr (fp) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) {  // PyTorch: integer base to a negative power
          if (a == 1) return T(1);
          if (a == T(-1)) return (b & 1) ? T(-1) : T(1);
          return T(0);
        }
      }
      T r = 1, base = a;
      for (T e = b; e > 0; e >>= 1) {
        if (e & 1) r = static_cast<T>(r * base);
        base = static_cast<T>(base * base);
      }
      return r;
    }
  } else if constexpr (Op == BinaryOp::Maximum) {
    if constexpr (fp) {
      if (a != a || b != b) return a != a ? a : b;
    }
    return a > b ? a : b;
  } else if constexpr (Op == BinaryOp::Minimum) {
    if constexpr (fp) {
      if (a != a || b != b) return a != a ? a : b;
    }
    return a < b ? a : b;
  } else if constexpr (Op == BinaryOp::Fmod) {
    if constexpr (fp)
      return std::fmod(a, b);
    else
      return int_mod(a, b);
  } else if constexpr (Op == BinaryOp::Remainder) {
    if constexpr (fp) {
      T m = std::fmod(a, b);
      if (m != T(0) && ((b < T(0)) != (m < T(0)))) m += b;
      return m;
    } else {
      T m = int_mod(a, b);
      if constexpr (std::is_signed_v<T>) {
        if (m != 0 && ((b < 0) != (m < 0))) m = static_cast<T>(m + b);
      }
      return m;
    }
  } else if constexpr (Op == BinaryOp::Atan2) {
    return std::atan2(a, b);
  } else if constexpr (Op == BinaryOp::LogAddExp) {
    // max + log1p(exp(-|a - b|)) never overflows; equal infinities are their own sum (PyTorch).
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    return m + std::log1p(std::exp(-std::fabs(a - b)));
  } else if constexpr (Op == BinaryOp::LogAddExp2) {
    if (std::isinf(a) && a == b) return a;
    const T m = a > b ? a : b;
    return m + std::log1p(std::exp2(-std::fabs(a - b))) * T(1.44269504088896340736);  // 1 / ln 2
  } else if constexpr (Op == BinaryOp::ReluBackward) {
    return b > T(0) ? a : T(0);  // PyTorch's threshold_backward: 0, not grad * 0, elsewhere
  } else if constexpr (Op == BinaryOp::Eq) {
    return a == b;
  } else if constexpr (Op == BinaryOp::Ne) {
    return a != b;
  } else if constexpr (Op == BinaryOp::Lt) {
    return a < b;
  } else if constexpr (Op == BinaryOp::Le) {
    return a <= b;
  } else if constexpr (Op == BinaryOp::Gt) {
    return a > b;
  } else if constexpr (Op == BinaryOp::Ge) {
    return a >= b;
  } else if constexpr (Op == BinaryOp::LogicalAnd) {
    return static_cast<bool>(a) && static_cast<bool>(b);
  } else if constexpr (Op == BinaryOp::LogicalOr) {
    return static_cast<bool>(a) || static_cast<bool>(b);
  } else if constexpr (Op == BinaryOp::LogicalXor) {
    return static_cast<bool>(a) != static_cast<bool>(b);
  } else if constexpr (Op == BinaryOp::BitAnd) {
    return static_cast<T>(a & b);
  } else if constexpr (Op == BinaryOp::BitOr) {
    return static_cast<T>(a | b);
  } else if constexpr (Op == BinaryOp::BitXor) {
    return static_cast<T>(a ^ b);
  } else if constexpr (Op == BinaryOp::Shl) {
    constexpr int bits = sizeof(T) * 8;
    if (b < 0 || b >= bits) return T(0);
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(a) << b);
  } else if constexpr (Op == BinaryOp::Shr) {
    constexpr int bits = sizeof(T) * 8;
    if (b < 0 || b >= bits) return static_cast<T>(a < 0 ? -1 : 0);
    return static_cast<T>(a >> b);
  } else {
    static_assert(sizeof(T) == 0, "ew::binary: a BinaryOp of elementwise_ops.def has no branch");
  }
}

// Three operands of one compute type (where, with its bool condition, is ew::where below).
template <TernaryOp Op, class T>
EMBER_HD inline T ternary(T x, T y, T z, const ElementwiseParams& p) {
  if constexpr (Op == TernaryOp::Lerp) {  // x + z * (y - x), stable at both ends
    if constexpr (is_fp<T>) {
      return (z < T(0.5)) ? x + z * (y - x) : y - (y - x) * (T(1) - z);
    } else {
      return static_cast<T>(x + z * (y - x));
    }
  } else if constexpr (Op == TernaryOp::Addcmul) {
    return static_cast<T>(x + static_cast<T>(p.a) * y * z);
  } else if constexpr (Op == TernaryOp::Addcdiv) {
    return static_cast<T>(x + static_cast<T>(p.a) * (y / z));
  } else if constexpr (Op == TernaryOp::Clamp) {  // clamp(x, min=y, max=z)
    if constexpr (is_fp<T>) {
      if (x != x) return x;
      if (y != y) return y;
      if (z != z) return z;
    }
    T r = x;
    if (p.has_a && r < y) r = y;
    if (p.has_b && r > z) r = z;
    return r;
  } else {
    static_assert(sizeof(T) == 0, "ew::ternary: a TernaryOp of elementwise_ops.def has no branch");
  }
}

template <class T>
EMBER_HD inline T where(bool c, T a, T b) {
  return c ? a : b;
}

}  // namespace ew

// visit_*(op, fn): calls fn(std::integral_constant<Op, op>{}) so backends get a compile-time op.
template <class Fn>
decltype(auto) visit_unary(UnaryOp op, Fn&& fn) {
  switch (op) {
#define EMBER_UNARY_OP(Enum, ...) \
  case UnaryOp::Enum:             \
    return fn(std::integral_constant<UnaryOp, UnaryOp::Enum>{});
#include "kernels/elementwise_ops.def"
  }
  return fn(std::integral_constant<UnaryOp, kUnaryOps[0]>{});
}

template <class Fn>
decltype(auto) visit_binary(BinaryOp op, Fn&& fn) {
  switch (op) {
#define EMBER_BINARY_OP(Enum, ...) \
  case BinaryOp::Enum:             \
    return fn(std::integral_constant<BinaryOp, BinaryOp::Enum>{});
#include "kernels/elementwise_ops.def"
  }
  return fn(std::integral_constant<BinaryOp, kBinaryOps[0]>{});
}

template <class Fn>
decltype(auto) visit_ternary(TernaryOp op, Fn&& fn) {
  switch (op) {
#define EMBER_TERNARY_OP(Enum, ...) \
  case TernaryOp::Enum:             \
    return fn(std::integral_constant<TernaryOp, TernaryOp::Enum>{});
#include "kernels/elementwise_ops.def"
  }
  return fn(std::integral_constant<TernaryOp, kTernaryOps[0]>{});
}

}  // namespace ember
