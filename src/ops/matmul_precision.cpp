// PyTorch's float32 matmul precision switch. The CPU always computes in full float32; CUDA lets
// "high" and "medium" use TensorFloat-32 tensor cores.
#include "ops/matmul_precision.h"

#include <atomic>
#include <string>

#include "ember/error.h"
#include "ember/ops.h"

namespace ember {

namespace {
std::atomic<MatmulPrecision> g_precision{MatmulPrecision::Highest};
}  // namespace

MatmulPrecision float32_matmul_precision() { return g_precision.load(std::memory_order_relaxed); }

void set_float32_matmul_precision(const std::string& precision) {
  MatmulPrecision p;
  if (precision == "highest") {
    p = MatmulPrecision::Highest;
  } else if (precision == "high") {
    p = MatmulPrecision::High;
  } else if (precision == "medium") {
    p = MatmulPrecision::Medium;
  } else {
    throw ValueError(
        "[set_float32_matmul_precision] expected \"highest\", \"high\" or \"medium\", got \"" +
        precision + "\"");
  }
  g_precision.store(p, std::memory_order_relaxed);
}

std::string get_float32_matmul_precision() {
  switch (float32_matmul_precision()) {
    case MatmulPrecision::High:
      return "high";
    case MatmulPrecision::Medium:
      return "medium";
    default:
      return "highest";
  }
}

}  // namespace ember
