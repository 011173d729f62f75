// Seed mixing for data loading: independent streams from (seed, epoch, batch) tuples.
#pragma once

#include <cstdint>

namespace ember::data::detail {

// SplitMix64's finaliser: a bijection that spreads every input bit over the output.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t mix_seed(uint64_t seed, uint64_t value) {
  return splitmix64(seed ^ splitmix64(value));
}

}  // namespace ember::data::detail
