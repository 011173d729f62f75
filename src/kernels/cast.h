// Value conversion between element types, defined for every pair (no UB on NaN or overflow).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ember/half.h"

namespace ember {

template <class To, class From>
EMBER_HD inline To cast(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (std::is_same_v<From, Half> || std::is_same_v<From, BFloat16>) {
    return cast<To>(static_cast<float>(x));
  } else if constexpr (std::is_same_v<To, bool>) {
    return x != From(0);
  } else if constexpr (std::is_same_v<To, Half> || std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(x));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // Out-of-range floats are undefined behaviour in C++; go through int64 with NaN -> 0 and
    // saturation at the int64 range, then wrap to the narrower type.
    if (x != x) return To(0);
    if (x >= From(9.2233720368547758e18))
      return static_cast<To>(std::numeric_limits<int64_t>::max());
    if (x <= From(-9.2233720368547758e18))
      return static_cast<To>(std::numeric_limits<int64_t>::min());
    return static_cast<To>(static_cast<int64_t>(x));
  } else {
    return static_cast<To>(x);
  }
}

}  // namespace ember
