// Philox4x32-10 blocks in bulk for the CPU random kernels: several counters at once in SIMD lanes
// (AVX-512 or AVX2, picked at run time), bit-identical to philox::block (kernels/philox.h).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/philox.h"

namespace ember::cpu {

// The generator's implementations; Auto is the fastest this CPU runs.
enum class PhiloxPath : uint8_t { Auto, Scalar, Avx2, Avx512 };

// Whether this CPU (and build) can run `path`.
bool philox_path_supported(PhiloxPath path);

// out[4 * i + j] = word j of philox::block(seed, offset, first + i) for i in [0, count): the
// blocks' words in element order, as the random ops lay them out.
void philox_blocks(uint64_t seed, uint64_t offset, uint64_t first, int64_t count, uint32_t* out,
                   PhiloxPath path = PhiloxPath::Auto);

// Blocks per chunk of the loops below (8 KiB of words on the stack).
inline constexpr int64_t kPhiloxChunk = 512;

// Calls fn(first_block, count, words) for consecutive chunks of the blocks [b0, b1), words as
// philox_blocks writes them.
template <class Fn>
void for_each_philox_chunk(uint64_t seed, uint64_t offset, int64_t b0, int64_t b1, Fn&& fn) {
  uint32_t words[4 * kPhiloxChunk];
  for (int64_t c = b0; c < b1; c += kPhiloxChunk) {
    const int64_t m = std::min(kPhiloxChunk, b1 - c);
    philox_blocks(seed, offset, static_cast<uint64_t>(c), m, words);
    fn(c, m, static_cast<const uint32_t*>(words));
  }
}

// Calls fn(block, words) for every block of [b0, b1) in order.
template <class Fn>
void for_each_philox_block(uint64_t seed, uint64_t offset, int64_t b0, int64_t b1, Fn&& fn) {
  for_each_philox_chunk(seed, offset, b0, b1, [&](int64_t c, int64_t m, const uint32_t* words) {
    for (int64_t i = 0; i < m; ++i) {
      philox::Words w;
      std::memcpy(w.v, words + 4 * i, sizeof w.v);
      fn(c + i, w);
    }
  });
}

}  // namespace ember::cpu
