// Convolution and pooling on the CPU at the shapes of `ember train`'s Fashion-MNIST CNN
// (batch 64): conv 1->32 on 28x28 and 32->64 on 14x14, 3x3 with padding 1, forward alone and
// forward + backward (input, weight and bias gradients); 2x2 max pooling forward + backward.
#include <benchmark/benchmark.h>

#include "ember/ember.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

// Sets the intra-op thread count for one benchmark (0 keeps it) and restores it after.
struct ThreadCount {
  explicit ThreadCount(int64_t n) : saved(get_num_threads()) {
    if (n > 0) set_num_threads(static_cast<int>(n));
  }
  ~ThreadCount() { set_num_threads(saved); }
  int saved;
};

void set_flops(benchmark::State& state, double flops_per_iter) {
  state.counters["GFLOP"] = benchmark::Counter(
      flops_per_iter * 1e-9 * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

// Args: in channels, out channels, image size, intra-op threads (0: the default). One thread
// gives a CPU time that is meaningful on a shared machine.
void BM_Conv2dForward(benchmark::State& state) {
  const int64_t ci = state.range(0), co = state.range(1), hw = state.range(2), n = 64;
  ThreadCount threads(state.range(3));
  manual_seed(0);
  Tensor x = randn({n, ci, hw, hw}), w = randn({co, ci, 3, 3}), b = randn({co});
  NoGradGuard g;
  for (auto _ : state) benchmark::DoNotOptimize(F::conv2d(x, w, b, 1, 1).data_ptr());
  set_flops(state, 2.0 * n * co * ci * 9 * hw * hw);
}
BENCHMARK(BM_Conv2dForward)
    ->Args({1, 32, 28, 0})
    ->Args({32, 64, 14, 0})
    ->Args({1, 32, 28, 1})
    ->Args({32, 64, 14, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Conv2dForwardBackward(benchmark::State& state) {
  const int64_t ci = state.range(0), co = state.range(1), hw = state.range(2), n = 64;
  ThreadCount threads(state.range(3));
  manual_seed(0);
  Tensor x = randn({n, ci, hw, hw}).requires_grad_(true);
  Tensor w = randn({co, ci, 3, 3}).requires_grad_(true), b = randn({co}).requires_grad_(true);
  Tensor gy = randn({n, co, hw, hw});
  for (auto _ : state) {
    TensorList grads = autograd::grad({F::conv2d(x, w, b, 1, 1)}, {x, w, b}, {gy});
    benchmark::DoNotOptimize(grads[0].data_ptr());
  }
  set_flops(state, 3 * 2.0 * n * co * ci * 9 * hw * hw);
}
BENCHMARK(BM_Conv2dForwardBackward)
    ->Args({1, 32, 28, 0})
    ->Args({32, 64, 14, 0})
    ->Args({1, 32, 28, 1})
    ->Args({32, 64, 14, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Args: channels, image size, threads.
void BM_MaxPool2dForwardBackward(benchmark::State& state) {
  const int64_t c = state.range(0), hw = state.range(1), n = 64;
  ThreadCount threads(state.range(2));
  manual_seed(0);
  Tensor x = randn({n, c, hw, hw}).requires_grad_(true);
  Tensor gy = randn({n, c, hw / 2, hw / 2});
  for (auto _ : state) {
    TensorList grads = autograd::grad({F::max_pool2d(x, 2)}, {x}, {gy});
    benchmark::DoNotOptimize(grads[0].data_ptr());
  }
}
BENCHMARK(BM_MaxPool2dForwardBackward)
    ->Args({32, 28, 0})
    ->Args({64, 14, 0})
    ->Args({32, 28, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
