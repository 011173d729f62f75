// The float32 matmul precision switch (ember::set_float32_matmul_precision), read by backends.
#pragma once

#include <cstdint>

namespace ember {

enum class MatmulPrecision : uint8_t { Highest, High, Medium };

// The current setting; one relaxed atomic load.
MatmulPrecision float32_matmul_precision();

}  // namespace ember
