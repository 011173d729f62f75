// GPU reductions and softmax: achieved bandwidth of a full sum (and as a fraction of a
// device-to-device copy), row and column sums, argmax, var and softmax over (4096 x 4096) float32.
#include <cstdio>
#include <functional>
#include <string>

#include "gpu_bench.h"

using namespace ember;

namespace {

// GB/s for `bytes` moved in `ms`.
double gbps(double bytes, double ms) { return bytes / (ms * 1e6); }

}  // namespace

int main() {
  if (bench::skip_without_gpu("bench_cuda_reduce")) return 0;
  const Device dev(kCUDA, 0);
  std::printf("device: %s\n", cuda::get_device_name(0).c_str());

  bench::print_header("full reductions (float32)");
  for (int64_t n : {int64_t(1) << 20, int64_t(1) << 24, int64_t(1) << 28}) {
    const Tensor x = randn({n}, TensorOptions(dev));
    Tensor y = empty({n}, TensorOptions(dev));
    const double bytes = 4.0 * static_cast<double>(n);
    const double copy_ms = bench::median_ms([&] { y.copy_(x); });
    const double copy_gbps = gbps(2 * bytes, copy_ms);  // read + write
    const double sum_ms = bench::median_ms([&] { (void)sum(x); });
    const std::string tag = "n = 2^" + std::to_string(__builtin_ctzll(static_cast<uint64_t>(n)));
    bench::print_row("copy_ D2D " + tag, copy_gbps, "GB/s");
    bench::print_row(
        "sum " + tag, gbps(bytes, sum_ms), "GB/s",
        std::to_string(gbps(bytes, sum_ms) / copy_gbps).substr(0, 5) + " of copy bandwidth");
    bench::print_row("amax " + tag, gbps(bytes, bench::median_ms([&] { (void)amax(x, {}); })),
                     "GB/s");
    bench::print_row("var " + tag, gbps(bytes, bench::median_ms([&] { (void)var(x); })), "GB/s");
  }

  bench::print_header("(4096 x 4096) float32");
  const Tensor m = randn({4096, 4096}, TensorOptions(dev));
  const double bytes = 4.0 * 4096 * 4096;
  struct Row {
    const char* name;
    double traffic;  // bytes read + written per call, in units of the input
    std::function<void()> fn;
  };
  const Row rows[] = {
      {"sum dim 1 (rows, inner path)", 1, [&] { (void)sum(m, {1}); }},
      {"sum dim 0 (columns, outer path)", 1, [&] { (void)sum(m, {0}); }},
      {"mean dims {0, 1}", 1,
       [&] {
         (void)mean(m, {0, 1});
       }},
      {"var dim 1", 1, [&] { (void)var(m, {1}); }},
      {"argmax dim 1", 1, [&] { (void)argmax(m, 1); }},
      {"argmax dim 0", 1, [&] { (void)argmax(m, 0); }},
      {"logsumexp dim 1", 1, [&] { (void)logsumexp(m, {1}); }},
      {"softmax dim 1 (row kernel)", 2, [&] { (void)softmax(m, 1); }},
      {"softmax dim 0 (column kernel)", 2, [&] { (void)softmax(m, 0); }},
      {"log_softmax dim 1", 2, [&] { (void)log_softmax(m, 1); }},
      {"cumsum dim 1", 2, [&] { (void)cumsum(m, 1); }},
      {"cumsum dim 0", 2, [&] { (void)cumsum(m, 0); }},
  };
  for (const Row& r : rows) {
    const double ms = bench::median_ms(r.fn);
    bench::print_row(r.name, gbps(r.traffic * bytes, ms), "GB/s",
                     std::to_string(ms * 1e3).substr(0, 7) + " us");
  }
  return 0;
}
