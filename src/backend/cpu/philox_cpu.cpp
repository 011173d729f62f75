// Philox4x32-10 across counters. Each 64-bit lane carries one 32-bit word of one block in its low
// half: the 32x32 -> 64-bit products of a round are then one vpmuludq per lane set, the high word
// one shift, and whatever the upper halves hold never reaches a lower half (vpmuludq reads only
// the low halves; shifts and xors keep halves apart). GCC 12 does not vectorise the plain loop
// (the widening product), hence intrinsics in functions compiled for their target.
#include "backend/cpu/philox_cpu.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EMBER_PHILOX_X86 1
#include <immintrin.h>
#endif

namespace ember::cpu {

namespace {

void blocks_scalar(uint64_t seed, uint64_t offset, uint64_t first, int64_t count, uint32_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    const philox::Words w = philox::block(seed, offset, first + static_cast<uint64_t>(i));
    std::memcpy(out + 4 * i, w.v, sizeof w.v);
  }
}

#ifdef EMBER_PHILOX_X86

// GCC 12's _mm512_mul_epu32 passes an undefined vector as its (unused) merge source, which
// -Wmaybe-uninitialized reports.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// Two independent sets of 8 blocks per step hide the multiplies' latency.
__attribute__((target("avx512f"))) void blocks_avx512(uint64_t seed, uint64_t offset,
                                                      uint64_t first, int64_t count,
                                                      uint32_t* out) {
  constexpr int kSets = 2;
  constexpr int64_t kStep = 8 * kSets;
  const __m512i mul0 = _mm512_set1_epi64(philox::kMul0);
  const __m512i mul1 = _mm512_set1_epi64(philox::kMul1);
  const __m512i ctr2 = _mm512_set1_epi64(static_cast<uint32_t>(offset));
  const __m512i ctr3 = _mm512_set1_epi64(static_cast<uint32_t>(offset >> 32));
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  // 64-bit element k of the two results: (w0, w1) or (w2, w3) of blocks 0..7 in order.
  const __m512i first_half = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
  const __m512i second_half = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
  int64_t g = 0;
  for (; g + kStep <= count; g += kStep) {
    __m512i x0[kSets], x1[kSets], x2[kSets], x3[kSets];
    for (int s = 0; s < kSets; ++s) {
      const uint64_t base = first + static_cast<uint64_t>(g + 8 * s);
      const __m512i idx = _mm512_add_epi64(_mm512_set1_epi64(static_cast<int64_t>(base)), lane);
      x0[s] = idx;  // the low word; the upper half is ignored
      x1[s] = _mm512_srli_epi64(idx, 32);
      x2[s] = ctr2;
      x3[s] = ctr3;
    }
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      const __m512i key0 = _mm512_set1_epi64(k0), key1 = _mm512_set1_epi64(k1);
      for (int s = 0; s < kSets; ++s) {
        const __m512i p0 = _mm512_mul_epu32(x0[s], mul0);
        const __m512i p1 = _mm512_mul_epu32(x2[s], mul1);
        // 0x96: a ^ b ^ c
        x0[s] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), x1[s], key0, 0x96);
        x2[s] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), x3[s], key1, 0x96);
        x1[s] = p1;
        x3[s] = p0;
      }
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
    for (int s = 0; s < kSets; ++s) {
      const __m512i w01 = _mm512_mask_blend_epi32(0xAAAA, x0[s], _mm512_slli_epi64(x1[s], 32));
      const __m512i w23 = _mm512_mask_blend_epi32(0xAAAA, x2[s], _mm512_slli_epi64(x3[s], 32));
      const __m512i even = _mm512_unpacklo_epi64(w01, w23);  // blocks 0, 2, 4, 6
      const __m512i odd = _mm512_unpackhi_epi64(w01, w23);   // blocks 1, 3, 5, 7
      uint32_t* o = out + 4 * (g + 8 * s);
      _mm512_storeu_si512(o, _mm512_permutex2var_epi64(even, first_half, odd));
      _mm512_storeu_si512(o + 16, _mm512_permutex2var_epi64(even, second_half, odd));
    }
  }
  blocks_scalar(seed, offset, first + static_cast<uint64_t>(g), count - g, out + 4 * g);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2"))) void blocks_avx2(uint64_t seed, uint64_t offset, uint64_t first,
                                                 int64_t count, uint32_t* out) {
  constexpr int kSets = 4;
  constexpr int64_t kStep = 4 * kSets;
  const __m256i mul0 = _mm256_set1_epi64x(philox::kMul0);
  const __m256i mul1 = _mm256_set1_epi64x(philox::kMul1);
  const __m256i ctr2 = _mm256_set1_epi64x(static_cast<uint32_t>(offset));
  const __m256i ctr3 = _mm256_set1_epi64x(static_cast<uint32_t>(offset >> 32));
  const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0);
  int64_t g = 0;
  for (; g + kStep <= count; g += kStep) {
    __m256i x0[kSets], x1[kSets], x2[kSets], x3[kSets];
    for (int s = 0; s < kSets; ++s) {
      const uint64_t base = first + static_cast<uint64_t>(g + 4 * s);
      const __m256i idx = _mm256_add_epi64(_mm256_set1_epi64x(static_cast<int64_t>(base)), lane);
      x0[s] = idx;
      x1[s] = _mm256_srli_epi64(idx, 32);
      x2[s] = ctr2;
      x3[s] = ctr3;
    }
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      const __m256i key0 = _mm256_set1_epi64x(k0), key1 = _mm256_set1_epi64x(k1);
      for (int s = 0; s < kSets; ++s) {
        const __m256i p0 = _mm256_mul_epu32(x0[s], mul0);
        const __m256i p1 = _mm256_mul_epu32(x2[s], mul1);
        x0[s] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), x1[s]), key0);
        x2[s] = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), x3[s]), key1);
        x1[s] = p1;
        x3[s] = p0;
      }
      k0 += philox::kWeyl0;
      k1 += philox::kWeyl1;
    }
    for (int s = 0; s < kSets; ++s) {
      const __m256i w01 = _mm256_blend_epi32(x0[s], _mm256_slli_epi64(x1[s], 32), 0xAA);
      const __m256i w23 = _mm256_blend_epi32(x2[s], _mm256_slli_epi64(x3[s], 32), 0xAA);
      const __m256i even = _mm256_unpacklo_epi64(w01, w23);  // blocks 0, 2
      const __m256i odd = _mm256_unpackhi_epi64(w01, w23);   // blocks 1, 3
      auto* o = reinterpret_cast<__m256i*>(out + 4 * (g + 4 * s));
      _mm256_storeu_si256(o, _mm256_permute2x128_si256(even, odd, 0x20));
      _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(even, odd, 0x31));
    }
  }
  blocks_scalar(seed, offset, first + static_cast<uint64_t>(g), count - g, out + 4 * g);
}

#endif  // EMBER_PHILOX_X86

PhiloxPath detect() {
#ifdef EMBER_PHILOX_X86
  if (__builtin_cpu_supports("avx512f")) return PhiloxPath::Avx512;
  if (__builtin_cpu_supports("avx2")) return PhiloxPath::Avx2;
#endif
  return PhiloxPath::Scalar;
}

}  // namespace

bool philox_path_supported(PhiloxPath path) {
  switch (path) {
    case PhiloxPath::Auto:
    case PhiloxPath::Scalar:
      return true;
#ifdef EMBER_PHILOX_X86
    case PhiloxPath::Avx2:
      return __builtin_cpu_supports("avx2");
    case PhiloxPath::Avx512:
      return __builtin_cpu_supports("avx512f");
#else
    default:
      return false;
#endif
  }
  return false;
}

void philox_blocks(uint64_t seed, uint64_t offset, uint64_t first, int64_t count, uint32_t* out,
                   PhiloxPath path) {
  static const PhiloxPath best = detect();
  if (path == PhiloxPath::Auto) path = best;
  switch (path) {
#ifdef EMBER_PHILOX_X86
    case PhiloxPath::Avx512:
      blocks_avx512(seed, offset, first, count, out);
      return;
    case PhiloxPath::Avx2:
      blocks_avx2(seed, offset, first, count, out);
      return;
#endif
    default:
      blocks_scalar(seed, offset, first, count, out);
      return;
  }
}

}  // namespace ember::cpu
