// The CPU window loops' bounds: which window positions of one tap fall inside the input.
#pragma once

#include <algorithm>
#include <cstdint>

namespace ember::cpu {

// The output positions [o0, o1) whose input index o * s - p + offset lies in [0, n).
inline void valid_range(int64_t n, int64_t out, int64_t s, int64_t p, int64_t offset, int64_t& o0,
                        int64_t& o1) {
  // o * s >= p - offset and o * s < n + p - offset
  const int64_t lo = p - offset, hi = n + p - offset;
  o0 = lo <= 0 ? 0 : (lo + s - 1) / s;
  o1 = hi <= 0 ? 0 : std::min(out, (hi + s - 1) / s);
  if (o1 < o0) o1 = o0;
}

}  // namespace ember::cpu
