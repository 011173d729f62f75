// Element-wise CPU benchmarks: per-op overhead on tiny tensors, memory bandwidth of large add/exp
// and of a transposed copy, each next to memcpy of the same bytes as the roof.
// GB/s counts bytes moved: every byte read plus every byte written.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

constexpr int64_t kLarge = int64_t{1} << 24;  // 16M float32 = 64 MiB per tensor
constexpr int64_t kSide = int64_t{1} << 12;   // 4096 x 4096 = 16M elements

void set_bytes(benchmark::State& state, int64_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * bytes_per_iteration);
}

// ---- overhead -----------------------------------------------------------------------------------

// Everything but the arithmetic: argument checks, promotion, output allocation, dispatch.
void BM_add_8_elements(benchmark::State& state) {
  Tensor a = ones({8});
  Tensor b = ones({8});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}
BENCHMARK(BM_add_8_elements)->UseRealTime();

// ---- large element-wise -------------------------------------------------------------------------

// Out of place: reads a and b, writes a fresh 64 MiB output each iteration.
void BM_add_16M(benchmark::State& state) {
  Tensor a = full({kLarge}, 1.0, kFloat32);
  Tensor b = full({kLarge}, 2.0, kFloat32);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
  set_bytes(state, kLarge * 12);
}
BENCHMARK(BM_add_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// In place: the same 12 bytes per element, but no allocation.
void BM_add_inplace_16M(benchmark::State& state) {
  Tensor a = zeros({kLarge});
  Tensor b = full({kLarge}, 1e-3, kFloat32);
  for (auto _ : state) benchmark::DoNotOptimize(a.add_(b));
  set_bytes(state, kLarge * 12);
}
BENCHMARK(BM_add_inplace_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// Unary, out of place: 8 bytes per element, plus the cost of exp itself.
void BM_exp_16M(benchmark::State& state) {
  Tensor a = arange(kLarge, kFloat32) / static_cast<double>(kLarge);  // [0, 1)
  for (auto _ : state) benchmark::DoNotOptimize(exp(a));
  set_bytes(state, kLarge * 8);
}
BENCHMARK(BM_exp_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// In place: no allocation, so the difference to exp_16M is the cost of a fresh output.
void BM_exp_inplace_16M(benchmark::State& state) {
  Tensor a = zeros({kLarge});
  for (auto _ : state) {
    benchmark::DoNotOptimize(a.exp_());
    state.PauseTiming();  // back to zeros, so repeated exp_ never reaches inf
    a.zero_();
    state.ResumeTiming();
  }
  set_bytes(state, kLarge * 8);
}
BENCHMARK(BM_exp_inplace_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// Transposed copy: reads with a 16 KiB stride, writes contiguously; 8 bytes per element.
void BM_transpose_copy_4096x4096(benchmark::State& state) {
  Tensor a = arange(kSide * kSide, kFloat32).view({kSide, kSide});
  Tensor at = a.t();
  for (auto _ : state) benchmark::DoNotOptimize(at.contiguous());
  set_bytes(state, kSide * kSide * 8);
}
BENCHMARK(BM_transpose_copy_4096x4096)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same transposed read into a preallocated output (no page faults on the destination).
void BM_transpose_copy_into_4096x4096(benchmark::State& state) {
  Tensor a = arange(kSide * kSide, kFloat32).view({kSide, kSide});
  Tensor out = empty({kSide, kSide});
  Tensor at = a.t();
  for (auto _ : state) benchmark::DoNotOptimize(out.copy_(at));
  set_bytes(state, kSide * kSide * 8);
}
BENCHMARK(BM_transpose_copy_into_4096x4096)->UseRealTime()->Unit(benchmark::kMillisecond);

// ember's contiguous copy into a preallocated tensor: the element-wise machinery at its simplest.
void BM_copy_into_16M(benchmark::State& state) {
  Tensor a = full({kLarge}, 1.0, kFloat32);
  Tensor out = empty({kLarge});
  for (auto _ : state) benchmark::DoNotOptimize(out.copy_(a));
  set_bytes(state, kLarge * 8);
}
BENCHMARK(BM_copy_into_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// ---- the roof -----------------------------------------------------------------------------------

// memcpy of one 64 MiB tensor into a preallocated one: 8 bytes moved per element, one thread.
void BM_memcpy_16M(benchmark::State& state) {
  std::vector<float> src(kLarge, 1.0f);
  std::vector<float> dst(kLarge, 0.0f);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kLarge * sizeof(float));
    benchmark::ClobberMemory();
  }
  set_bytes(state, kLarge * 8);
}
BENCHMARK(BM_memcpy_16M)->UseRealTime()->Unit(benchmark::kMillisecond);

// The same copy split over ember's CPU threads, as the element-wise kernels split their work.
void BM_memcpy_16M_threads(benchmark::State& state) {
  std::vector<float> src(kLarge, 1.0f);
  std::vector<float> dst(kLarge, 0.0f);
  for (auto _ : state) {
    parallel_for(kLarge, 1 << 16, [&](int64_t begin, int64_t end) {
      std::memcpy(dst.data() + begin, src.data() + begin, (end - begin) * sizeof(float));
    });
    benchmark::ClobberMemory();
  }
  set_bytes(state, kLarge * 8);
}
BENCHMARK(BM_memcpy_16M_threads)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
