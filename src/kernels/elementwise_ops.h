// Element-wise math written once for host and device (EMBER_HD). Backends instantiate these
// through visit_unary / visit_binary / visit_ternary; adding an op here adds it everywhere.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/macros.h"

namespace ember {

enum class UnaryOp : uint8_t {
  Neg,
  Abs,
  Sign,
  Exp,
  Exp2,
  Log,
  Log2,
  Log1p,
  Expm1,
  Sqrt,
  Rsqrt,
  Reciprocal,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sigmoid,
  Erf,
  Relu,
  Gelu,
  GeluTanh,
  Silu,
  Softplus,
  Elu,
  LeakyRelu,
  Floor,
  Ceil,
  Round,
  Trunc,
  LogicalNot,
  BitwiseNot,
  IsNan,
  IsInf,
  IsFinite,
  Clamp,
  PowScalar,
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  DivTrunc,
  DivFloor,
  Pow,
  Maximum,
  Minimum,
  Fmod,
  Remainder,
  Atan2,
  ReluBackward,  // (grad, result) -> grad where result > 0, else 0: ReLU's derivative in one pass
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  LogicalAnd,
  LogicalOr,
  LogicalXor,
  BitAnd,
  BitOr,
  BitXor,
  Shl,
  Shr,
};

enum class TernaryOp : uint8_t { Where, Lerp, Addcmul, Addcdiv, Clamp };

// Op parameters: alpha of add/sub, slopes, softplus beta/threshold, clamp bounds, addcmul value.
struct ElementwiseParams {
  double a = 0.0;
  double b = 0.0;
  bool has_a = true;  // clamp: whether min (a) / max (b) were given
  bool has_b = true;
};

// Ops whose result is bool whatever the input dtype.
EMBER_HD constexpr bool returns_bool(UnaryOp op) {
  return op == UnaryOp::LogicalNot || op == UnaryOp::IsNan || op == UnaryOp::IsInf ||
         op == UnaryOp::IsFinite;
}
EMBER_HD constexpr bool returns_bool(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt || op == BinaryOp::Le ||
         op == BinaryOp::Gt || op == BinaryOp::Ge || op == BinaryOp::LogicalAnd ||
         op == BinaryOp::LogicalOr || op == BinaryOp::LogicalXor;
}

// Which (op, compute type) pairs a kernel is instantiated for; the op layer promotes or rejects
// everything else before a backend sees it.
template <UnaryOp Op, class T>
inline constexpr bool unary_supports =
    (Op >= UnaryOp::Exp && Op <= UnaryOp::Erf) || (Op >= UnaryOp::Gelu && Op <= UnaryOp::LeakyRelu)
        ? std::is_floating_point_v<T>
        : (Op == UnaryOp::BitwiseNot ? !std::is_floating_point_v<T> : true);

template <BinaryOp Op, class T>
inline constexpr bool binary_supports =
    (Op == BinaryOp::Div || Op == BinaryOp::Atan2 || Op == BinaryOp::ReluBackward)
        ? std::is_floating_point_v<T>
        : (Op >= BinaryOp::BitAnd ? !std::is_floating_point_v<T> &&
                                        (Op <= BinaryOp::BitXor || !std::is_same_v<T, bool>)
                                  : true);

template <TernaryOp Op, class T>
inline constexpr bool ternary_supports =
    Op == TernaryOp::Addcdiv || Op == TernaryOp::Lerp ? std::is_floating_point_v<T>
                                                      : Op != TernaryOp::Where;

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
  } else if constexpr (fp) {
    return a;  // bitwise ops on floats are rejected by the op layer
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
  }
}

// Where takes a bool condition as its first operand and two values.
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
    return x;
  }
}

template <class T>
EMBER_HD inline T where(bool c, T a, T b) {
  return c ? a : b;
}

}  // namespace ew

// visit_*(op, fn): calls fn(std::integral_constant<Op, op>{}) so backends get a compile-time op.
#define EMBER_OP_CASE(Enum, Name) \
  case Enum::Name:                \
    return fn(std::integral_constant<Enum, Enum::Name>{});

template <class Fn>
decltype(auto) visit_unary(UnaryOp op, Fn&& fn) {
  // clang-format off
  switch (op) {
    EMBER_OP_CASE(UnaryOp, Neg) EMBER_OP_CASE(UnaryOp, Abs) EMBER_OP_CASE(UnaryOp, Sign)
    EMBER_OP_CASE(UnaryOp, Exp) EMBER_OP_CASE(UnaryOp, Exp2) EMBER_OP_CASE(UnaryOp, Log)
    EMBER_OP_CASE(UnaryOp, Log2) EMBER_OP_CASE(UnaryOp, Log1p) EMBER_OP_CASE(UnaryOp, Expm1)
    EMBER_OP_CASE(UnaryOp, Sqrt) EMBER_OP_CASE(UnaryOp, Rsqrt) EMBER_OP_CASE(UnaryOp, Reciprocal)
    EMBER_OP_CASE(UnaryOp, Sin) EMBER_OP_CASE(UnaryOp, Cos) EMBER_OP_CASE(UnaryOp, Tan)
    EMBER_OP_CASE(UnaryOp, Tanh) EMBER_OP_CASE(UnaryOp, Sigmoid) EMBER_OP_CASE(UnaryOp, Erf)
    EMBER_OP_CASE(UnaryOp, Relu) EMBER_OP_CASE(UnaryOp, Gelu) EMBER_OP_CASE(UnaryOp, GeluTanh)
    EMBER_OP_CASE(UnaryOp, Silu) EMBER_OP_CASE(UnaryOp, Softplus) EMBER_OP_CASE(UnaryOp, Elu)
    EMBER_OP_CASE(UnaryOp, LeakyRelu) EMBER_OP_CASE(UnaryOp, Floor) EMBER_OP_CASE(UnaryOp, Ceil)
    EMBER_OP_CASE(UnaryOp, Round) EMBER_OP_CASE(UnaryOp, Trunc)
    EMBER_OP_CASE(UnaryOp, LogicalNot) EMBER_OP_CASE(UnaryOp, BitwiseNot)
    EMBER_OP_CASE(UnaryOp, IsNan) EMBER_OP_CASE(UnaryOp, IsInf) EMBER_OP_CASE(UnaryOp, IsFinite)
    EMBER_OP_CASE(UnaryOp, Clamp) EMBER_OP_CASE(UnaryOp, PowScalar)
  }
  // clang-format on
  return fn(std::integral_constant<UnaryOp, UnaryOp::Neg>{});
}

template <class Fn>
decltype(auto) visit_binary(BinaryOp op, Fn&& fn) {
  // clang-format off
  switch (op) {
    EMBER_OP_CASE(BinaryOp, Add) EMBER_OP_CASE(BinaryOp, Sub) EMBER_OP_CASE(BinaryOp, Mul)
    EMBER_OP_CASE(BinaryOp, Div) EMBER_OP_CASE(BinaryOp, DivTrunc)
    EMBER_OP_CASE(BinaryOp, DivFloor) EMBER_OP_CASE(BinaryOp, Pow)
    EMBER_OP_CASE(BinaryOp, Maximum) EMBER_OP_CASE(BinaryOp, Minimum)
    EMBER_OP_CASE(BinaryOp, Fmod) EMBER_OP_CASE(BinaryOp, Remainder)
    EMBER_OP_CASE(BinaryOp, Atan2) EMBER_OP_CASE(BinaryOp, ReluBackward)
    EMBER_OP_CASE(BinaryOp, Eq) EMBER_OP_CASE(BinaryOp, Ne)
    EMBER_OP_CASE(BinaryOp, Lt) EMBER_OP_CASE(BinaryOp, Le) EMBER_OP_CASE(BinaryOp, Gt)
    EMBER_OP_CASE(BinaryOp, Ge) EMBER_OP_CASE(BinaryOp, LogicalAnd)
    EMBER_OP_CASE(BinaryOp, LogicalOr) EMBER_OP_CASE(BinaryOp, LogicalXor)
    EMBER_OP_CASE(BinaryOp, BitAnd) EMBER_OP_CASE(BinaryOp, BitOr)
    EMBER_OP_CASE(BinaryOp, BitXor) EMBER_OP_CASE(BinaryOp, Shl) EMBER_OP_CASE(BinaryOp, Shr)
  }
  // clang-format on
  return fn(std::integral_constant<BinaryOp, BinaryOp::Add>{});
}

template <class Fn>
decltype(auto) visit_ternary(TernaryOp op, Fn&& fn) {
  // clang-format off
  switch (op) {
    EMBER_OP_CASE(TernaryOp, Where) EMBER_OP_CASE(TernaryOp, Lerp)
    EMBER_OP_CASE(TernaryOp, Addcmul) EMBER_OP_CASE(TernaryOp, Addcdiv)
    EMBER_OP_CASE(TernaryOp, Clamp)
  }
  // clang-format on
  return fn(std::integral_constant<TernaryOp, TernaryOp::Where>{});
}

#undef EMBER_OP_CASE

}  // namespace ember
