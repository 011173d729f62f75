// Random distributions over Philox blocks, written once for host and device (EMBER_HD): the CPU
// kernel and a CUDA kernel map block b to the same elements and so produce the same tensors.
//
// Element layout (element i = row-major logical index into the output, whatever its strides):
//   uniform, normal, bernoulli into 16/32-bit floats or integers: 4 per block, i -> block i/4
//   the same into float64; randint; raw 64-bit keys:                2 per block, i -> block i/2
// Each call takes one generator offset; blocks are philox::block(seed, offset, b).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ember/half.h"
#include "ember/macros.h"
#include "kernels/cast.h"
#include "kernels/philox.h"
#include "kernels/portable_math.h"

namespace ember {

enum class RandomOp : uint8_t {
  Uniform,    // from + (to - from) * u, u in [0, 1); floating outputs
  Normal,     // mean + std * z, Box-Muller; floating outputs
  RandInt,    // low + (64 random bits mod range); any dtype
  Bernoulli,  // u < p with a scalar p; any dtype
  Bits64,     // 64 raw bits reinterpreted as int64 (randperm's sort keys); int64 output
};

struct RandomParams {
  double a = 0.0;      // uniform: from; normal: mean; bernoulli: p
  double b = 1.0;      // uniform: to; normal: std
  int64_t low = 0;     // randint
  uint64_t range = 0;  // randint: high - low; 0 stands for 2^64
};

namespace rnd {

// ---- bit helpers --------------------------------------------------------------------------------

// Words 2j (low half) and 2j+1 (high half) of a block as one 64-bit value.
EMBER_HD inline uint64_t word64(const philox::Words& w, int j) {
  return static_cast<uint64_t>(w.v[2 * j]) | (static_cast<uint64_t>(w.v[2 * j + 1]) << 32);
}

// [0, 1) from the top 53 bits: every value is exact in double.
EMBER_HD inline double unit53(uint64_t x) {
  return static_cast<double>(x >> 11) * 1.1102230246251565e-16;  // 2^-53
}

// [0, 1) from the top `digits` bits (<= 24): exact in float, and in T when digits is T's
// significand width, so rounding to T can never produce 1.
EMBER_HD inline float unit_bits(uint32_t x, int digits) {
  return static_cast<float>(x >> (32 - digits)) / static_cast<float>(1u << digits);
}

// Significand bits used for uniform values of each floating type.
template <class T>
inline constexpr int kUniformDigits = std::is_same_v<T, Half>       ? 11
                                      : std::is_same_v<T, BFloat16> ? 8
                                                                    : 24;

// a * b + c with two roundings on every target: nvcc would otherwise contract it into an FMA and
// the device would disagree with the host in the last bit.
using pmath::mul_add;

// The next representable value below a finite x (one step of the sign-magnitude encoding).
template <class Bits>
EMBER_HD inline Bits step_down_bits(Bits b, Bits sign) {
  if ((b & static_cast<Bits>(sign - 1)) == 0) return static_cast<Bits>(sign | 1);  // +-0
  return (b & sign) ? static_cast<Bits>(b + 1) : static_cast<Bits>(b - 1);
}

template <class T>
EMBER_HD inline T next_down(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T::from_bits(step_down_bits<uint16_t>(x.x, 0x8000u));
  } else if constexpr (std::is_same_v<T, float>) {
    return detail::bits_float(step_down_bits<uint32_t>(detail::float_bits(x), 0x80000000u));
  } else {
    return detail::bits_double(
        step_down_bits<uint64_t>(detail::double_bits(x), 0x8000000000000000ull));
  }
}

// ---- per-element transforms ---------------------------------------------------------------------

// Elements one block yields for an op and output type.
template <RandomOp Op, class T>
EMBER_HD constexpr int per_block() {
  if constexpr (Op == RandomOp::RandInt || Op == RandomOp::Bits64)
    return 2;
  else
    return std::is_same_v<T, double> ? 2 : 4;
}

// from + (to - from) * u rounded to T, kept below `to` when rounding would reach it.
template <class T, class C>
EMBER_HD inline T uniform_value(C u, const RandomParams& p) {
  const T v = cast<T>(mul_add(static_cast<C>(p.b - p.a), u, static_cast<C>(p.a)));
  if (p.b > p.a && cast<double>(v) >= p.b) {
    T top = cast<T>(p.b);
    if (cast<double>(top) >= p.b) top = next_down(top);
    return top;
  }
  return v;
}

// Box-Muller on u1 in (0, 1], u2 in [0, 1): two independent standard normals. Done in double for
// every output type, with ember's own log and sincos (kernels/portable_math.h): libm's and the
// GPU's differ in the last bit, and a CPU tensor must equal a CUDA tensor drawn from the same seed.
EMBER_HD inline void box_muller(double u1, double u2, double& z0, double& z1) {
  const double r = std::sqrt(pmath::mul(-2.0, pmath::log(u1)));
  double s, c;
  pmath::sincos_2pi(u2, s, c);
  z0 = pmath::mul(r, c);
  z1 = pmath::mul(r, s);
}

// The uniform a Bernoulli draw compares with p: 24 bits per word, 53 bits per word pair when the
// output is float64.
template <class T>
EMBER_HD inline double bernoulli_unit(const philox::Words& w, int j) {
  if constexpr (std::is_same_v<T, double>) {
    return unit53(word64(w, j));
  } else {
    return static_cast<double>(w.v[j] >> 8) * 5.9604644775390625e-08;  // 2^-24
  }
}

// The per_block<Op, T>() values of one block, in element order.
template <RandomOp Op, class T>
EMBER_HD inline void generate(const philox::Words& w, const RandomParams& p, T* out) {
  if constexpr (Op == RandomOp::Uniform) {
    if constexpr (std::is_same_v<T, double>) {
      for (int j = 0; j < 2; ++j) out[j] = uniform_value<T, double>(unit53(word64(w, j)), p);
    } else {
      for (int j = 0; j < 4; ++j) {
        out[j] = uniform_value<T, float>(unit_bits(w.v[j], kUniformDigits<T>), p);
      }
    }
  } else if constexpr (Op == RandomOp::Normal) {
    if constexpr (std::is_same_v<T, double>) {
      const double u1 = static_cast<double>((word64(w, 0) >> 11) + 1) * 1.1102230246251565e-16;
      double z0, z1;
      box_muller(u1, unit53(word64(w, 1)), z0, z1);
      out[0] = mul_add(p.b, z0, p.a);
      out[1] = mul_add(p.b, z1, p.a);
    } else {
      for (int k = 0; k < 2; ++k) {
        const double u1 = static_cast<double>((w.v[2 * k] >> 8) + 1u) * 5.9604644775390625e-08;
        const double u2 = static_cast<double>(w.v[2 * k + 1] >> 8) * 5.9604644775390625e-08;
        double z0, z1;
        box_muller(u1, u2, z0, z1);
        out[2 * k] = cast<T>(mul_add(p.b, z0, p.a));
        out[2 * k + 1] = cast<T>(mul_add(p.b, z1, p.a));
      }
    }
  } else if constexpr (Op == RandomOp::RandInt) {
    for (int j = 0; j < 2; ++j) {
      const uint64_t x = word64(w, j);
      const uint64_t r = p.range == 0 ? x : x % p.range;
      out[j] = cast<T>(static_cast<int64_t>(static_cast<uint64_t>(p.low) + r));
    }
  } else if constexpr (Op == RandomOp::Bernoulli) {
    for (int j = 0; j < per_block<Op, T>(); ++j) out[j] = cast<T>(bernoulli_unit<T>(w, j) < p.a);
  } else {
    for (int j = 0; j < 2; ++j) out[j] = static_cast<T>(word64(w, j));
  }
}

}  // namespace rnd
}  // namespace ember
