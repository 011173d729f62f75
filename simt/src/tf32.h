// TF32 rounding shared by the emulated math libraries (cuBLASLt, cuDNN).
#pragma once

#include <cstdint>
#include <cstring>

namespace simt::detail {

// Round to nearest (ties away) at TF32's 10 significand bits, as the tensor cores read floats.
inline float to_tf32(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, 4);
  if ((bits & 0x7F800000u) != 0x7F800000u) bits = (bits + 0x1000u) & 0xFFFFE000u;
  std::memcpy(&x, &bits, 4);
  return x;
}

}  // namespace simt::detail
