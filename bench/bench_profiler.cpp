// Profiler overhead on the CPU: a tiny add (where per-op cost shows most) with no profiler, with
// a profiler recording, and with one recording shapes and memory too.
#include <benchmark/benchmark.h>

#include "ember/ember.h"
#include "ember/profiler.h"

using namespace ember;

namespace {

void run_adds(benchmark::State& state) {
  Tensor a = ones({8});
  Tensor b = ones({8});
  for (auto _ : state) benchmark::DoNotOptimize(add(a, b));
}

// The hook's one branch per op: no profiler anywhere.
void BM_add_profiler_off(benchmark::State& state) { run_adds(state); }
BENCHMARK(BM_add_profiler_off)->UseRealTime();

// Every add records a range (the event cap keeps memory bounded; dropped ranges cost less).
void BM_add_profiler_on(benchmark::State& state) {
  profiler::profile prof({.max_events = 1 << 22});
  prof.start();
  run_adds(state);
  prof.stop();
}
BENCHMARK(BM_add_profiler_on)->UseRealTime()->Iterations(200000);

void BM_add_profiler_shapes_memory(benchmark::State& state) {
  profiler::profile prof({.record_shapes = true, .profile_memory = true, .max_events = 1 << 22});
  prof.start();
  run_adds(state);
  prof.stop();
}
BENCHMARK(BM_add_profiler_shapes_memory)->UseRealTime()->Iterations(200000);

}  // namespace

BENCHMARK_MAIN();
