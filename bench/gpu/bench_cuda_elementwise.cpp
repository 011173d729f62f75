// Bandwidth of the CUDA element-wise and copy kernels on large tensors, next to a device-to-device
// copy (cudaMemcpyAsync) of the same tensors: GB/s counts every byte read and written once.
#include <cstdio>
#include <string>

#include "gpu_bench.h"

using namespace ember;

namespace {

double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

}  // namespace

int main() {
  if (bench::skip_without_gpu("bench_cuda_elementwise")) return 0;
  const int64_t n = int64_t{1} << 26;  // 64M elements: 256 MiB per float32 tensor
  const auto on = [](DType t) { return TensorOptions().dtype(t).device(kCUDA); };
  Tensor a = full({n}, 1.5, on(kFloat32)), b = full({n}, -0.5, on(kFloat32));
  Tensor out = empty({n}, on(kFloat32));
  const double f32 = 4.0 * static_cast<double>(n);

  bench::print_header(
      ("element-wise bandwidth, " + std::to_string(n) + " elements, " + cuda::get_device_name())
          .c_str());
  const double copy_ms = bench::median_ms([&] { out.copy_(a); });
  const double copy_bw = gbps(2 * f32, copy_ms);
  bench::print_row("copy float32 (cudaMemcpyAsync)", copy_bw, "GB/s", "1.00 of copy");

  const auto row = [&](const std::string& name, double bytes, const std::function<void()>& fn) {
    const double bw = gbps(bytes, bench::median_ms(fn));
    char note[32];
    std::snprintf(note, sizeof(note), "%.2f of copy", bw / copy_bw);
    bench::print_row(name, bw, "GB/s", note);
  };
  row("add float32", 3 * f32, [&] { add(a, b); });
  row("mul float32", 3 * f32, [&] { mul(a, b); });
  row("mul float32 by a scalar tensor", 2 * f32, [&] { mul(a, b.narrow(0, 0, 1).reshape({})); });
  row("relu float32", 2 * f32, [&] { relu(a); });
  row("add_ float32 in place", 3 * f32, [&] { a.add_(b); });
  Tensor h = a.to(kBFloat16), h2 = b.to(kBFloat16);
  row("add bfloat16", 3 * f32 / 2, [&] { add(h, h2); });
  row("cast float32 -> bfloat16", f32 + f32 / 2, [&] { a.to(kBFloat16); });
  row("cast bfloat16 -> float32", f32 / 2 + f32, [&] { h.to(kFloat32); });
  row("cast float32 -> int64", f32 + 2 * f32, [&] { a.to(kInt64); });

  // Strided layouts: a transposed operand and a transposing copy (shared-memory tiles).
  const int64_t side = int64_t{1} << 13;
  Tensor m = full({side, side}, 2.0, on(kFloat32)), m2 = full({side, side}, 3.0, on(kFloat32));
  const double mf32 = 4.0 * static_cast<double>(side * side);
  row("add float32, one input transposed", 3 * mf32, [&] { add(m.t(), m2); });
  row("transpose copy float32 (8192^2)", 2 * mf32, [&] { m.t().contiguous(); });
  row("transpose cast float32 -> float16", mf32 + mf32 / 2, [&] { m.t().to(kFloat16); });
  return 0;
}
