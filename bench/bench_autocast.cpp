// The CPU cost of autocast: one small-MLP training step (forward, backward, SGD) without a
// guard, under a disabled guard and under bf16 autocast, and the fixed cost autocast adds to one
// op (an op off the lists, and a listed op whose inputs need no cast) next to the same op alone.
#include <benchmark/benchmark.h>

#include "ember/ember.h"

using namespace ember;

namespace {

struct Mlp {
  nn::Sequential net{nn::Linear(64, 128), nn::ReLU(), nn::Linear(128, 128), nn::ReLU(),
                     nn::Linear(128, 10)};
  Tensor x = randn({32, 64});
  Tensor y = randint(10, {32});
  optim::SGD opt{net->parameters(), optim::SGDOptions(0.01)};

  void step(bool guard, bool enabled) {
    opt.zero_grad();
    Tensor loss;
    if (guard) {
      amp::autocast ac(kCPU, kBFloat16, enabled);
      loss = nn::functional::cross_entropy(net->forward(x), y);
    } else {
      loss = nn::functional::cross_entropy(net->forward(x), y);
    }
    loss.backward();
    opt.step();
  }
};

void BM_MlpStep_NoGuard(benchmark::State& state) {
  set_num_threads(1);
  Mlp m;
  for (auto _ : state) m.step(false, false);
}

void BM_MlpStep_GuardDisabled(benchmark::State& state) {
  set_num_threads(1);
  Mlp m;
  for (auto _ : state) m.step(true, false);
}

void BM_MlpStep_AutocastBf16(benchmark::State& state) {
  set_num_threads(1);
  Mlp m;
  for (auto _ : state) m.step(true, true);
}

// add is on no list: autocast costs it one thread-local load.
void BM_Add8(benchmark::State& state) {
  Tensor a = randn({8}), b = randn({8});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}

void BM_Add8_UnderAutocast(benchmark::State& state) {
  Tensor a = randn({8}), b = randn({8});
  amp::autocast ac(kCPU);
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}

// mm on bf16 inputs: under autocast the inputs need no cast, so the difference is the policy
// scope itself (a copy of the inputs, the exclusion flag, the recursive call).
void BM_Mm8Bf16(benchmark::State& state) {
  Tensor a = randn({8, 8}).to(kBFloat16), b = randn({8, 8}).to(kBFloat16);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b));
}

void BM_Mm8Bf16_UnderAutocast(benchmark::State& state) {
  Tensor a = randn({8, 8}).to(kBFloat16), b = randn({8, 8}).to(kBFloat16);
  amp::autocast ac(kCPU);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b));
}

// mm on float32 inputs under autocast: two casts to bf16 per call (no cache: not parameters).
void BM_Mm8F32_UnderAutocast(benchmark::State& state) {
  Tensor a = randn({8, 8}), b = randn({8, 8});
  amp::autocast ac(kCPU);
  for (auto _ : state) benchmark::DoNotOptimize(mm(a, b));
}

// Constructing and destroying a guard (the outermost one also clears the cast cache).
void BM_GuardEnterExit(benchmark::State& state) {
  for (auto _ : state) {
    amp::autocast ac(kCPU);
    benchmark::ClobberMemory();
  }
}

}  // namespace

BENCHMARK(BM_MlpStep_NoGuard)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MlpStep_GuardDisabled)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MlpStep_AutocastBf16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Add8);
BENCHMARK(BM_Add8_UnderAutocast);
BENCHMARK(BM_Mm8Bf16);
BENCHMARK(BM_Mm8Bf16_UnderAutocast);
BENCHMARK(BM_Mm8F32_UnderAutocast);
BENCHMARK(BM_GuardEnterExit);

BENCHMARK_MAIN();
