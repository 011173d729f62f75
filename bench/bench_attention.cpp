// Scaled dot-product attention on the CPU: the fused kernels (what the op runs without dropout)
// against the math path composed of public ops (matmul, softmax, matmul), float32, 8 heads of 64
// dims, sequence lengths 256 to 1024; forward, and forward + backward.
#include <benchmark/benchmark.h>

#include <cmath>

#include "ember/ember.h"

using namespace ember;
namespace F = nn::functional;

namespace {

constexpr int64_t kHeads = 8, kDim = 64;

Tensor math_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  return matmul(softmax(matmul(q * scale, k.transpose(-2, -1)), -1), v);
}

template <bool Fused, bool Backward>
void BM_Attention(benchmark::State& state) {
  const int64_t l = state.range(0);
  manual_seed(0);
  Tensor q = randn({1, kHeads, l, kDim}).requires_grad_(Backward);
  Tensor k = randn({1, kHeads, l, kDim}).requires_grad_(Backward);
  Tensor v = randn({1, kHeads, l, kDim}).requires_grad_(Backward);
  for (auto _ : state) {
    Tensor out = Fused ? F::scaled_dot_product_attention(q, k, v) : math_attention(q, k, v);
    if (Backward) out.sum().backward();
    benchmark::DoNotOptimize(out);
  }
  // Two products of 2 * L * L * E flops each forward; the backward does about 2.5x that.
  const double flops = 4.0 * kHeads * l * l * kDim * (Backward ? 3.5 : 1.0);
  state.counters["GFLOP/s"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK_TEMPLATE(BM_Attention, true, false)
    ->Name("AttentionFused")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Attention, false, false)
    ->Name("AttentionMath")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Attention, true, true)
    ->Name("AttentionFusedBackward")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime();
BENCHMARK_TEMPLATE(BM_Attention, false, true)
    ->Name("AttentionMathBackward")
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
