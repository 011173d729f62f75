// The fp16/bf16 functions cuda_fp16.h and cuda_bf16.h declare for device code only, as host C++
// for the SIMT emulator. Included by simt/emu.h.
#pragma once

namespace simt::detail {

inline float to_float(__half x) { return __half2float(x); }
inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
inline double to_double(__half x) { return __half2float(x); }
inline double to_double(__nv_bfloat16 x) { return __bfloat162float(x); }

template <typename H>
H round_float(float x);
template <>
inline __half round_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
inline __nv_bfloat16 round_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <typename H>
H round_double(double x);
template <>
inline __half round_double<__half>(double x) {
  return __double2half(x);
}
template <>
inline __nv_bfloat16 round_double<__nv_bfloat16>(double x) {
  return __double2bfloat16(x);
}

// a*b is exact in double and the fma rounds once more than the GPU; that double rounding never
// changed a 16-bit result on millions of random triples, while rounding through float does.
template <typename H>
inline H fma16(H a, H b, H c) {
  return round_double<H>(std::fma(to_double(a), to_double(b), to_double(c)));
}

template <typename H2, typename H, typename F>
inline H2 map2(H2 x, F f) {
  H2 out = x;
  out.x = f(H(x.x));
  out.y = f(H(x.y));
  return out;
}

}  // namespace simt::detail

// Element-wise functions of one 16-bit value: computed in float by libm, rounded once.
#define SIMT_HALF_UNARY(H, name, expr)         \
  inline H name(H a) {                         \
    const float x = simt::detail::to_float(a); \
    return simt::detail::round_float<H>(expr); \
  }
#define SIMT_HALF_MATH(H)                                                             \
  SIMT_HALF_UNARY(H, hexp, ::expf(x))                                                 \
  SIMT_HALF_UNARY(H, hexp2, ::exp2f(x))                                               \
  SIMT_HALF_UNARY(H, hexp10, ::exp10f(x))                                             \
  SIMT_HALF_UNARY(H, hlog, ::logf(x))                                                 \
  SIMT_HALF_UNARY(H, hlog2, ::log2f(x))                                               \
  SIMT_HALF_UNARY(H, hlog10, ::log10f(x))                                             \
  SIMT_HALF_UNARY(H, hsqrt, ::sqrtf(x))                                               \
  SIMT_HALF_UNARY(H, hrsqrt, 1.0f / ::sqrtf(x))                                       \
  SIMT_HALF_UNARY(H, hrcp, 1.0f / x)                                                  \
  SIMT_HALF_UNARY(H, hsin, ::sinf(x))                                                 \
  SIMT_HALF_UNARY(H, hcos, ::cosf(x))                                                 \
  SIMT_HALF_UNARY(H, htanh, ::tanhf(x))                                               \
  SIMT_HALF_UNARY(H, hfloor, ::floorf(x))                                             \
  SIMT_HALF_UNARY(H, hceil, ::ceilf(x))                                               \
  SIMT_HALF_UNARY(H, htrunc, ::truncf(x))                                             \
  SIMT_HALF_UNARY(H, hrint, ::nearbyintf(x))                                          \
  inline H __hfma(H a, H b, H c) { return simt::detail::fma16(a, b, c); }             \
  inline H __hfma_sat(H a, H b, H c) {                                                \
    const float r = simt::detail::to_float(simt::detail::fma16(a, b, c));             \
    return simt::detail::round_float<H>(r > 0.0f ? (r < 1.0f ? r : 1.0f) : 0.0f);     \
  }                                                                                   \
  inline H __hfma_relu(H a, H b, H c) {                                               \
    const H r = simt::detail::fma16(a, b, c);                                         \
    return simt::detail::to_float(r) < 0.0f ? simt::detail::round_float<H>(0.0f) : r; \
  }

SIMT_HALF_MATH(__half)
SIMT_HALF_MATH(__nv_bfloat16)
#undef SIMT_HALF_MATH
#undef SIMT_HALF_UNARY

// The same on both halves of a pair.
#define SIMT_HALF2_UNARY(H2, H, name, scalar)                           \
  inline H2 name(H2 a) {                                                \
    return simt::detail::map2<H2, H>(a, [](H x) { return scalar(x); }); \
  }
#define SIMT_HALF2_MATH(H2, H)                   \
  SIMT_HALF2_UNARY(H2, H, h2exp, hexp)           \
  SIMT_HALF2_UNARY(H2, H, h2exp2, hexp2)         \
  SIMT_HALF2_UNARY(H2, H, h2exp10, hexp10)       \
  SIMT_HALF2_UNARY(H2, H, h2log, hlog)           \
  SIMT_HALF2_UNARY(H2, H, h2log2, hlog2)         \
  SIMT_HALF2_UNARY(H2, H, h2log10, hlog10)       \
  SIMT_HALF2_UNARY(H2, H, h2sqrt, hsqrt)         \
  SIMT_HALF2_UNARY(H2, H, h2rsqrt, hrsqrt)       \
  SIMT_HALF2_UNARY(H2, H, h2rcp, hrcp)           \
  SIMT_HALF2_UNARY(H2, H, h2sin, hsin)           \
  SIMT_HALF2_UNARY(H2, H, h2cos, hcos)           \
  SIMT_HALF2_UNARY(H2, H, h2tanh, htanh)         \
  SIMT_HALF2_UNARY(H2, H, h2floor, hfloor)       \
  SIMT_HALF2_UNARY(H2, H, h2ceil, hceil)         \
  SIMT_HALF2_UNARY(H2, H, h2trunc, htrunc)       \
  SIMT_HALF2_UNARY(H2, H, h2rint, hrint)         \
  inline H2 __hfma2(H2 a, H2 b, H2 c) {          \
    H2 out = a;                                  \
    out.x = __hfma(H(a.x), H(b.x), H(c.x));      \
    out.y = __hfma(H(a.y), H(b.y), H(c.y));      \
    return out;                                  \
  }                                              \
  inline H2 __hfma2_sat(H2 a, H2 b, H2 c) {      \
    H2 out = a;                                  \
    out.x = __hfma_sat(H(a.x), H(b.x), H(c.x));  \
    out.y = __hfma_sat(H(a.y), H(b.y), H(c.y));  \
    return out;                                  \
  }                                              \
  inline H2 __hfma2_relu(H2 a, H2 b, H2 c) {     \
    H2 out = a;                                  \
    out.x = __hfma_relu(H(a.x), H(b.x), H(c.x)); \
    out.y = __hfma_relu(H(a.y), H(b.y), H(c.y)); \
    return out;                                  \
  }

SIMT_HALF2_MATH(__half2, __half)
SIMT_HALF2_MATH(__nv_bfloat162, __nv_bfloat16)
#undef SIMT_HALF2_MATH
#undef SIMT_HALF2_UNARY

// Conversions to integers with the rounding modes the host headers leave out (rz is there).
#define SIMT_HALF_TO_INT(H, hname, to, tname)                                  \
  inline to __##hname##2##tname##_rn(H x) {                                    \
    return simt::detail::convert_saturating<to>(simt::detail::to_float(x), 0); \
  }                                                                            \
  inline to __##hname##2##tname##_rd(H x) {                                    \
    return simt::detail::convert_saturating<to>(simt::detail::to_float(x), 2); \
  }                                                                            \
  inline to __##hname##2##tname##_ru(H x) {                                    \
    return simt::detail::convert_saturating<to>(simt::detail::to_float(x), 3); \
  }
#define SIMT_HALF_TO_INTS(H, hname)                  \
  SIMT_HALF_TO_INT(H, hname, int, int)               \
  SIMT_HALF_TO_INT(H, hname, unsigned, uint)         \
  SIMT_HALF_TO_INT(H, hname, short, short)           \
  SIMT_HALF_TO_INT(H, hname, unsigned short, ushort) \
  SIMT_HALF_TO_INT(H, hname, long long, ll)          \
  SIMT_HALF_TO_INT(H, hname, unsigned long long, ull)
SIMT_HALF_TO_INTS(__half, half)
SIMT_HALF_TO_INTS(__nv_bfloat16, bfloat16)
#undef SIMT_HALF_TO_INTS
#undef SIMT_HALF_TO_INT

inline __half __bfloat162half(__nv_bfloat16 x) { return __float2half_rn(__bfloat162float(x)); }
