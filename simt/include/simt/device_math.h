// The emulated device math library. Included first in every emulated kernel translation unit, it
// gives libm's names a different symbol (an asm label), so that a kernel's sin, log, expf, ...
// call simt_dev_* (simt/src/device_math.cpp) rather than the host's libm. Those return a result
// that differs from libm's in the last bit for about half of the inputs, and stays within CUDA's
// documented error bound: a kernel that only passes when its device math is bit-identical to the
// host's fails under the emulator as it does on a GPU. Host code (ember's CPU kernels, tests)
// keeps libm.
#pragma once

#if !defined(__CUDACC__)

// One declaration per function and precision; SIMT_DEV_MATH_FUNCTIONS lists them for the source.
#define SIMT_DEV_MATH_UNARY(X) \
  X(sin)                       \
  X(cos)                       \
  X(tan)                       \
  X(asin)                      \
  X(acos)                      \
  X(atan)                      \
  X(sinh)                      \
  X(cosh)                      \
  X(tanh)                      \
  X(asinh)                     \
  X(acosh)                     \
  X(atanh)                     \
  X(exp)                       \
  X(exp2)                      \
  X(exp10)                     \
  X(expm1)                     \
  X(log)                       \
  X(log2)                      \
  X(log10)                     \
  X(log1p)                     \
  X(cbrt)                      \
  X(erf)                       \
  X(erfc)                      \
  X(lgamma)                    \
  X(tgamma)
#define SIMT_DEV_MATH_BINARY(X) \
  X(pow)                        \
  X(atan2)                      \
  X(hypot)

#if !defined(SIMT_DEVICE_MATH_NO_RENAME)  // device_math.cpp needs the lists, not the renaming

#define SIMT_DEV_MATH_DECLARE_1(fn)                    \
  double fn(double) noexcept __asm__("simt_dev_" #fn); \
  float fn##f(float) noexcept __asm__("simt_dev_" #fn "f");
#define SIMT_DEV_MATH_DECLARE_2(fn)                            \
  double fn(double, double) noexcept __asm__("simt_dev_" #fn); \
  float fn##f(float, float) noexcept __asm__("simt_dev_" #fn "f");

extern "C" {
SIMT_DEV_MATH_UNARY(SIMT_DEV_MATH_DECLARE_1)
SIMT_DEV_MATH_BINARY(SIMT_DEV_MATH_DECLARE_2)
void sincos(double, double*, double*) noexcept __asm__("simt_dev_sincos");
void sincosf(float, float*, float*) noexcept __asm__("simt_dev_sincosf");
}

#undef SIMT_DEV_MATH_DECLARE_1
#undef SIMT_DEV_MATH_DECLARE_2

#endif  // !SIMT_DEVICE_MATH_NO_RENAME

#endif  // !__CUDACC__
