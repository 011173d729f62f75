// Floating-point functions that give the same bits on the host and on a CUDA device.
//
// A GPU's log, sin and cos are not the host's libm: both are within an ulp or two of the exact
// value, but they disagree in the last bit for many inputs. nvcc also contracts a * b + c into a
// fused multiply-add by default (-fmad=true), where a host compiler without FMA in its target (or
// with -ffp-contract=off) rounds twice. Code that must produce the same bits on both sides (the
// random distributions: a CPU tensor and a CUDA tensor drawn from one seed are equal) uses these
// functions, built only from correctly rounded + - * / and sqrt, each of them rounded on its own:
//
// - on the device through the _rn intrinsics, which nvcc never contracts;
// - on the host (and in the emulator, which compiles kernels with contraction on, as nvcc does)
//   through an empty asm statement the compiler cannot see through, so no a * b + c becomes an FMA
//   whatever -ffp-contract or -march says.
//
// Accuracy (tests/test_random.cpp checks it against long double libm): log within 1 ulp,
// sincos_2pi within 2 ulp.
#pragma once

#include <cmath>
#include <cstdint>

#include "ember/half.h"
#include "ember/macros.h"

namespace ember::pmath {

// ---- arithmetic, one rounding per operation -----------------------------------------------------

template <class T>
EMBER_HD inline T rounded(T x) {
#if !defined(__CUDA_ARCH__)
#if defined(__x86_64__) || defined(__i386__)
  asm("" : "+x"(x));
#elif defined(__aarch64__)
  asm("" : "+w"(x));
#else
  volatile T v = x;
  x = v;
#endif
#endif
  return x;
}

EMBER_HD inline double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return rounded(a + b);
#endif
}
EMBER_HD inline double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return rounded(a - b);
#endif
}
EMBER_HD inline double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return rounded(a * b);
#endif
}
EMBER_HD inline double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return rounded(a / b);
#endif
}
EMBER_HD inline float add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return rounded(a + b);
#endif
}
EMBER_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return rounded(a * b);
#endif
}

// a * b + c with two roundings, never fused.
EMBER_HD inline double mul_add(double a, double b, double c) { return add(mul(a, b), c); }
EMBER_HD inline float mul_add(float a, float b, float c) { return add(mul(a, b), c); }

// ---- log ----------------------------------------------------------------------------------------

// The natural logarithm. x = 2^k m with m in [sqrt(2)/2, sqrt(2)); f = m - 1 is exact, and
// log(m) = 2 atanh(s) with s = f / (2 + f), |s| < 0.172. Writing 2s = f - f^2/2 + s f^2/2 keeps the
// leading term exact: log(m) = f - h + s (h + R), h = f^2 / 2, R = 2 (s^2/3 + s^4/5 + ...), whose
// Taylor terms fall below 2^-60 of the result by the twelfth.
EMBER_HD inline double log(double x) {
  if (!(x > 0.0)) return x == 0.0 ? -INFINITY : NAN;  // negative or NaN: NaN
  if (x == INFINITY) return x;
  int k = 0;
  if (x < 2.2250738585072014e-308) {  // subnormal: scale into the normal range (exact)
    x = mul(x, 18014398509481984.0);  // 2^54
    k = -54;
  }
  const uint64_t b = detail::double_bits(x);
  k += static_cast<int>((b >> 52) & 0x7ff) - 1023;
  double m = detail::bits_double((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  if (m > 1.4142135623730951) {
    m = mul(m, 0.5);
    ++k;
  }
  const double f = sub(m, 1.0);
  const double s = div(f, add(2.0, f));
  const double z = mul(s, s);
  double p = 2.0 / 25.0;
  p = mul_add(p, z, 2.0 / 23.0);
  p = mul_add(p, z, 2.0 / 21.0);
  p = mul_add(p, z, 2.0 / 19.0);
  p = mul_add(p, z, 2.0 / 17.0);
  p = mul_add(p, z, 2.0 / 15.0);
  p = mul_add(p, z, 2.0 / 13.0);
  p = mul_add(p, z, 2.0 / 11.0);
  p = mul_add(p, z, 2.0 / 9.0);
  p = mul_add(p, z, 2.0 / 7.0);
  p = mul_add(p, z, 2.0 / 5.0);
  p = mul_add(p, z, 2.0 / 3.0);
  const double r = mul(p, z);
  const double h = mul(mul(0.5, f), f);
  // ln 2 = kLn2Hi + kLn2Lo, kLn2Hi with 32 significant bits so k * kLn2Hi is exact.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double dk = static_cast<double>(k);
  const double tail = add(mul(s, add(h, r)), mul(dk, kLn2Lo));
  return sub(mul(dk, kLn2Hi), sub(sub(h, tail), f));
}

// ---- sin and cos of a fraction of a turn --------------------------------------------------------

// sin(2 pi u) and cos(2 pi u). The reduction is exact: u = n/4 + t with n an integer and
// |t| <= 1/8, so 2 pi u = n pi/2 + a with a = 2 pi t, |a| <= pi/4 (one rounding). On that range
// the Taylor series of sin and cos reach 2^-60 by the 19th and 20th powers.
EMBER_HD inline void sincos_2pi(double u, double& s, double& c) {
  if (!(u - u == 0.0)) {  // infinite or NaN
    s = c = NAN;
    return;
  }
  const double n = std::rint(mul(u, 4.0));
  const double t = sub(u, mul(n, 0.25));                        // exact (Sterbenz, or n = 0)
  const double q = sub(n, mul(std::floor(mul(n, 0.25)), 4.0));  // n mod 4, exact
  const double a = mul(t, 6.283185307179586);
  const double z = mul(a, a);
  // sin a = a + a z P(z), P(z) = -1/3! + z/5! - ... ; cos a = 1 - z/2 + z^2 Q(z), Q = 1/4! - ...
  double p = -1.0 / 121645100408832000.0;  // -1/19!
  p = mul_add(p, z, 1.0 / 355687428096000.0);
  p = mul_add(p, z, -1.0 / 1307674368000.0);
  p = mul_add(p, z, 1.0 / 6227020800.0);
  p = mul_add(p, z, -1.0 / 39916800.0);
  p = mul_add(p, z, 1.0 / 362880.0);
  p = mul_add(p, z, -1.0 / 5040.0);
  p = mul_add(p, z, 1.0 / 120.0);
  p = mul_add(p, z, -1.0 / 6.0);
  const double sin_a = add(a, mul(mul(a, z), p));
  double qc = 1.0 / 2432902008176640000.0;  // 1/20!
  qc = mul_add(qc, z, -1.0 / 6402373705728000.0);
  qc = mul_add(qc, z, 1.0 / 20922789888000.0);
  qc = mul_add(qc, z, -1.0 / 87178291200.0);
  qc = mul_add(qc, z, 1.0 / 479001600.0);
  qc = mul_add(qc, z, -1.0 / 3628800.0);
  qc = mul_add(qc, z, 1.0 / 40320.0);
  qc = mul_add(qc, z, -1.0 / 720.0);
  qc = mul_add(qc, z, 1.0 / 24.0);
  // 1 - z/2 rounds; its rounding error goes back in with the small terms.
  const double hz = mul(0.5, z);
  const double w = sub(1.0, hz);
  const double cos_a = add(w, add(sub(sub(1.0, w), hz), mul(mul(z, z), qc)));
  if (q == 0.0) {
    s = sin_a;
    c = cos_a;
  } else if (q == 1.0) {
    s = cos_a;
    c = -sin_a;
  } else if (q == 2.0) {
    s = -sin_a;
    c = -cos_a;
  } else {
    s = -cos_a;
    c = sin_a;
  }
}

}  // namespace ember::pmath
