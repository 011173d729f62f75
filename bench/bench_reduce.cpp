// Reduction and softmax throughput: sums (full, along rows, along columns) and softmax over
// 16M float32 elements, reported as GB/s of input read.
#include <benchmark/benchmark.h>

#include <random>
#include <thread>

#include "ember/ember.h"

using namespace ember;

namespace {

constexpr int64_t kElems = 16 * 1024 * 1024;

Tensor random_input(const Shape& shape) {
  std::mt19937 rng(0);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) x = n(rng);
  return tensor(v, shape);
}

void set_bytes(benchmark::State& state, int64_t elems, size_t elem_size) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * elems *
                          static_cast<int64_t>(elem_size));
}

void BM_SumAll(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems});
  for (auto _ : state) benchmark::DoNotOptimize(sum(x));
  set_bytes(state, kElems, sizeof(float));
}

// (16384, 1024): each output folds a contiguous row.
void BM_SumRows(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(sum(x, {1}));
  set_bytes(state, kElems, sizeof(float));
}

// (16384, 1024) summed over dim 0: outputs are adjacent, rows are accumulated.
void BM_SumCols(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(sum(x, {0}));
  set_bytes(state, kElems, sizeof(float));
}

void BM_MaxAll(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems});
  for (auto _ : state) benchmark::DoNotOptimize(amax(x));
  set_bytes(state, kElems, sizeof(float));
}

void BM_VarRows(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(var(x, {1}));
  set_bytes(state, kElems, sizeof(float));
}

// Rows of 1024, softmax along the last dim; bytes count the input read once.
void BM_Softmax(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(softmax(x, 1));
  set_bytes(state, kElems, sizeof(float));
}

void BM_LogSoftmax(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({kElems / 1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(log_softmax(x, 1));
  set_bytes(state, kElems, sizeof(float));
}

// Softmax along dim 0 of (1024, 16384): columns of the inner dim processed together.
void BM_SoftmaxDim0(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor x = random_input({1024, kElems / 1024});
  for (auto _ : state) benchmark::DoNotOptimize(softmax(x, 0));
  set_bytes(state, kElems, sizeof(float));
}

void thread_args(benchmark::internal::Benchmark* b) {
  b->Arg(1);
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw > 1) b->Arg(hw);
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

}  // namespace

BENCHMARK(BM_SumAll)->Apply(thread_args);
BENCHMARK(BM_SumRows)->Apply(thread_args);
BENCHMARK(BM_SumCols)->Apply(thread_args);
BENCHMARK(BM_MaxAll)->Apply(thread_args);
BENCHMARK(BM_VarRows)->Apply(thread_args);
BENCHMARK(BM_Softmax)->Apply(thread_args);
BENCHMARK(BM_LogSoftmax)->Apply(thread_args);
BENCHMARK(BM_SoftmaxDim0)->Apply(thread_args);

BENCHMARK_MAIN();
