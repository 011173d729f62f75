// Matrix-product throughput on the CPU: square sgemm, x @ w.t() as linear runs it, the 16-bit
// path through float32, and a batch of small matrices. The GFLOP counter is a rate (GFLOP/s,
// 2*n*m*k per product).
#include <benchmark/benchmark.h>

#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "ember/backends.h"
#include "ember/ember.h"

using namespace ember;

namespace {

Tensor random_matrix(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) x = normal(rng);
  return tensor(v, shape).to(dtype);
}

void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP"] = benchmark::Counter(
      flops_per_iter * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// (n, n) @ (n, n)
void BM_Sgemm(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = random_matrix({n, n}, kFloat32, 1), b = random_matrix({n, n}, kFloat32, 2);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b).data_ptr());
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_Sgemm)->Arg(512)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

// x (n, n) @ w (n, n).t(): the weight goes to BLAS with a transpose flag, not copied.
void BM_SgemmTransposed(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor x = random_matrix({n, n}, kFloat32, 3), w = random_matrix({n, n}, kFloat32, 4);
  for (auto _ : state) benchmark::DoNotOptimize(linear(x, w).data_ptr());
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_SgemmTransposed)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// bfloat16 through float32 blocks (conversion cost included).
void BM_GemmBFloat16(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = random_matrix({n, n}, kBFloat16, 5), b = random_matrix({n, n}, kBFloat16, 6);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b).data_ptr());
  set_flops(state, 2.0 * n * n * n);
}
BENCHMARK(BM_GemmBFloat16)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

// (batch, s, s) @ (batch, s, s): many small products split across threads.
void BM_BatchedSmall(benchmark::State& state) {
  const int64_t batch = state.range(0), s = state.range(1);
  Tensor a = random_matrix({batch, s, s}, kFloat32, 7),
         b = random_matrix({batch, s, s}, kFloat32, 8);
  for (auto _ : state) benchmark::DoNotOptimize(bmm(a, b).data_ptr());
  set_flops(state, 2.0 * batch * s * s * s);
}
BENCHMARK(BM_BatchedSmall)
    ->Args({4096, 8})
    ->Args({1024, 32})
    ->Args({256, 64})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// The products of the training workloads through each float32 library: arg 0 picks the shape
// of kShapes, arg 1 the library (0 OpenBLAS, 1 oneDNN where ember's rule would pick it for the
// shape; without oneDNN both rows are OpenBLAS). "T" marks an operand passed transposed.
struct GemmShape {
  int64_t m, n, k;
  bool ta, tb;
  const char* where;
};
constexpr GemmShape kShapes[] = {
    {128, 512, 784, false, true, "MLP fc1 forward, A B^T"},
    {128, 784, 512, false, false, "MLP input gradient, A B"},
    {512, 784, 128, true, false, "MLP weight gradient, A^T B"},
    {64, 128, 3136, false, true, "CNN fc1 forward, A B^T"},
    {64, 196, 288, false, false, "CNN conv2 forward per sample, A B"},
    {2048, 256, 256, false, true, "transformer projection, A B^T"},
    {2048, 1024, 256, false, true, "transformer feed-forward, A B^T"},
    {512, 512, 512, false, false, "square 512, A B"},
};

void BM_SgemmLibrary(benchmark::State& state) {
  const GemmShape& s = kShapes[state.range(0)];
  backends::mkldnn::FlagsGuard guard(state.range(1) == 1);
  Tensor a =
      s.ta ? random_matrix({s.k, s.m}, kFloat32, 9).t() : random_matrix({s.m, s.k}, kFloat32, 9);
  Tensor b =
      s.tb ? random_matrix({s.n, s.k}, kFloat32, 10).t() : random_matrix({s.k, s.n}, kFloat32, 10);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b).data_ptr());
  set_flops(state, 2.0 * s.m * s.n * s.k);
  state.SetLabel(std::string(s.where) + (state.range(1) == 1 ? " [oneDNN on]" : " [oneDNN off]"));
}
BENCHMARK(BM_SgemmLibrary)
    ->ArgsProduct({benchmark::CreateDenseRange(0, std::size(kShapes) - 1, 1), {0, 1}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
