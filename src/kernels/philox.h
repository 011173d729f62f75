// Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As Easy as 1, 2, 3", SC'11) and the
// counter layout ember's random ops use. Plain C++ for host and device (EMBER_HD).
#pragma once

#include <cstdint>

#include "ember/macros.h"

namespace ember::philox {

// Four 32-bit words: a counter going in, random bits coming out.
struct Words {
  uint32_t v[4];
};

inline constexpr uint32_t kMul0 = 0xD2511F53u;
inline constexpr uint32_t kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u;  // key schedule increments (golden ratio, sqrt 3)
inline constexpr uint32_t kWeyl1 = 0xBB67AE85u;

// The 64-bit product goes through uint64 arithmetic rather than __umulhi so the one source
// compiles (and produces the same bits) everywhere.
EMBER_HD inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * static_cast<uint64_t>(b);
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

EMBER_HD inline Words philox4x32_10(Words ctr, uint32_t k0, uint32_t k1) {
  uint32_t x0 = ctr.v[0], x1 = ctr.v[1], x2 = ctr.v[2], x3 = ctr.v[3];
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kWeyl0;
      k1 += kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kMul0, x0, hi0, lo0);
    mul_hi_lo(kMul1, x2, hi1, lo1);
    const uint32_t y0 = hi1 ^ x1 ^ k0;
    const uint32_t y2 = hi0 ^ x3 ^ k1;
    x0 = y0;
    x1 = lo1;
    x2 = y2;
    x3 = lo0;
  }
  return Words{{x0, x1, x2, x3}};
}

// Block `index` of the stream for (seed, offset): key = seed, counter = {index, offset} as
// little-endian 32-bit halves. Each random call owns one offset, so a call can use 2^64 blocks
// and any thread (or GPU lane) can compute any block on its own.
EMBER_HD inline Words block(uint64_t seed, uint64_t offset, uint64_t index) {
  const Words ctr{{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                   static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)}};
  return philox4x32_10(ctr, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

}  // namespace ember::philox
