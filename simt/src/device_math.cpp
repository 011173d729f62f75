// The emulated device math library (simt/device_math.h renames a kernel's libm calls to these).
//
// A GPU's libdevice is not the host's libm: both are within an ulp or two of the exact value, but
// they disagree in the last bit for many inputs. To make that visible, each function here takes
// libm's result r and, for about half of the inputs (chosen by a hash of the argument bits, so the
// choice is deterministic), returns the other neighbour of the exact value: the representable
// number next to r on the side where the exact value lies (a long double evaluation tells which).
// The result stays faithfully rounded, within 1 ulp, inside CUDA's documented bounds (1 ulp for
// log and exp, 2 for sin, cos and pow, more for erf, lgamma, tgamma). Exact results (log(1),
// sin(0), powers of two), infinities, NaNs and zeros are returned unchanged.
#include <cmath>
#include <cstdint>
#include <cstring>

#define SIMT_DEVICE_MATH_NO_RENAME  // this file calls the host's libm
#include "simt/device_math.h"

namespace {

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t bits_of(double x) {
  uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// A different choice of inputs for each function.
constexpr uint64_t salt(const char* name) {
  uint64_t h = 0xCBF29CE484222325ull;  // FNV-1a
  for (; *name; ++name) h = (h ^ static_cast<unsigned char>(*name)) * 0x100000001B3ull;
  return h;
}

bool chosen(uint64_t key) { return (mix(key) >> 63) != 0; }

// r moved one step toward the exact value `ref` when the key is chosen and r is inexact.
template <class T>
T other_neighbour(T r, long double ref, uint64_t key) {
  if (!std::isfinite(r) || r == T(0) || !std::isfinite(ref)) return r;
  if (static_cast<long double>(r) == ref || !chosen(key)) return r;
  const T toward = static_cast<long double>(r) < ref ? T(INFINITY) : T(-INFINITY);
  const T n = std::nextafter(r, toward);
  return std::isfinite(n) && n != T(0) ? n : r;
}

// The host libm entry points, reached through a name the renaming header leaves alone.
#define SIMT_LIBM_1(fn)                              \
  double host_##fn(double x) { return ::fn(x); }     \
  float host_##fn##f(float x) { return ::fn##f(x); } \
  long double host_##fn##l(long double x) { return ::fn##l(x); }
#define SIMT_LIBM_2(fn)                                          \
  double host_##fn(double x, double y) { return ::fn(x, y); }    \
  float host_##fn##f(float x, float y) { return ::fn##f(x, y); } \
  long double host_##fn##l(long double x, long double y) { return ::fn##l(x, y); }
SIMT_DEV_MATH_UNARY(SIMT_LIBM_1)
SIMT_DEV_MATH_BINARY(SIMT_LIBM_2)

}  // namespace

// device_math.h declares these names with asm labels for the kernels; here they are defined under
// the labels themselves.
#define SIMT_DEFINE_1(fn)                                                                 \
  extern "C" double simt_dev_##fn(double x) noexcept {                                    \
    return other_neighbour(host_##fn(x), host_##fn##l(x), bits_of(x) ^ salt(#fn));        \
  }                                                                                       \
  extern "C" float simt_dev_##fn##f(float x) noexcept {                                   \
    return other_neighbour(host_##fn##f(x), host_##fn##l(x), bits_of(x) ^ salt(#fn "f")); \
  }
#define SIMT_DEFINE_2(fn)                                                 \
  extern "C" double simt_dev_##fn(double x, double y) noexcept {          \
    return other_neighbour(host_##fn(x, y), host_##fn##l(x, y),           \
                           salt(#fn) ^ bits_of(x) ^ mix(bits_of(y)));     \
  }                                                                       \
  extern "C" float simt_dev_##fn##f(float x, float y) noexcept {          \
    return other_neighbour(host_##fn##f(x, y), host_##fn##l(x, y),        \
                           salt(#fn "f") ^ bits_of(x) ^ mix(bits_of(y))); \
  }
SIMT_DEV_MATH_UNARY(SIMT_DEFINE_1)
SIMT_DEV_MATH_BINARY(SIMT_DEFINE_2)

// sincos and sincosf: each half as its own function would return it.
extern "C" void simt_dev_sincos(double x, double* s, double* c) noexcept {
  *s = simt_dev_sin(x);
  *c = simt_dev_cos(x);
}
extern "C" void simt_dev_sincosf(float x, float* s, float* c) noexcept {
  *s = simt_dev_sinf(x);
  *c = simt_dev_cosf(x);
}
