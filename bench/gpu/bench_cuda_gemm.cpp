// CUDA matmul throughput through cuBLASLt: TFLOP/s of a 4096^3 product in float32 (full precision
// and TF32), bfloat16 and float16, plus a transposed operand and a batched product.
#include <cstdio>
#include <string>

#include "gpu_bench.h"

using namespace ember;

namespace {

void measure(const std::string& name, const Tensor& a, const Tensor& b, double flops) {
  const double ms = bench::median_ms([&] { (void)matmul(a, b); }, 10, 5);
  bench::print_row(name, flops / (ms * 1e-3) / 1e12, "TFLOP/s", std::to_string(ms) + " ms");
}

}  // namespace

int main() {
  if (bench::skip_without_gpu("bench_cuda_gemm")) return 0;
  const int64_t n = 4096;
  const double flops = 2.0 * n * n * n;
  bench::print_header(("matmul (" + cuda::get_device_name() + ")").c_str());
  for (DType dt : {kFloat32, kBFloat16, kFloat16}) {
    const TensorOptions o = TensorOptions().dtype(dt).device(Device("cuda"));
    const Tensor a = randn({n, n}, o), b = randn({n, n}, o);
    const std::string tag = std::string(dtype_name(dt)) + " " + std::to_string(n) + "^3";
    if (dt == kFloat32) {
      set_float32_matmul_precision("highest");
      measure(tag + " (highest)", a, b, flops);
      set_float32_matmul_precision("high");
      measure(tag + " (high, TF32)", a, b, flops);
      set_float32_matmul_precision("highest");
    } else {
      measure(tag, a, b, flops);
      measure(tag + " a^T", a.t(), b, flops);  // transposed in memory: an op flag, no copy
    }
  }
  const TensorOptions bf = TensorOptions().dtype(kBFloat16).device(Device("cuda"));
  const Tensor x = randn({32, 1024, 1024}, bf), y = randn({32, 1024, 1024}, bf);
  measure("bfloat16 bmm 32 x 1024^3", x, y, 2.0 * 32 * 1024.0 * 1024 * 1024);
  return 0;
}
