// The process-wide switches that ops and backends read, kept in one place: the float32 matmul
// precision, cuDNN's and oneDNN's flags (all set through ember/backends.h).
#pragma once

#include <cstdint>

namespace ember {

enum class MatmulPrecision : uint8_t { Highest, High, Medium };

// The current float32 matmul precision; one relaxed atomic load.
MatmulPrecision float32_matmul_precision();

}  // namespace ember
