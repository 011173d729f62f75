// DataLoader throughput on Fashion-MNIST-shaped data: one pass over 10,000 28x28 images in
// batches of 64, with 0, 1 and 2 worker threads, plain and with augmentation (pad-4 random crop
// and horizontal flip). Reported as samples per second.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "ember/ember.h"

using namespace ember;
using namespace ember::data;

namespace {

constexpr int64_t kSamples = 10000;

// A Fashion-MNIST directory of random images, written once, so the real reader and per-sample
// conversion are what is measured.
const std::string& synthetic_root() {
  static const std::string root = [] {
    const auto dir = std::filesystem::temp_directory_path() / "ember_bench_fashion";
    std::filesystem::create_directories(dir);
    manual_seed(0);
    write_idx((dir / "train-images-idx3-ubyte").string(),
              randint(0, 256, {kSamples, 28, 28}, TensorOptions(kUInt8)));
    write_idx((dir / "train-labels-idx1-ubyte").string(),
              randint(0, 10, {kSamples}, TensorOptions(kUInt8)));
    return dir.string();
  }();
  return root;
}

void run_pass(benchmark::State& state, Transform transform) {
  set_num_threads(1);  // the workers are the parallelism measured here
  FashionMNIST ds(synthetic_root(), true, std::move(transform));
  DataLoaderOptions o = DataLoaderOptions().batch_size(64).shuffle(true).seed(0);
  if (state.range(0) > 0) o.num_workers(static_cast<int>(state.range(0)));
  DataLoader loader(ds, o);
  for (auto _ : state) {
    for (auto& batch : loader) benchmark::DoNotOptimize(batch.data.data_ptr());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kSamples);
}

void BM_FashionPass(benchmark::State& state) { run_pass(state, {}); }

void BM_FashionPassAugmented(benchmark::State& state) {
  run_pass(state,
           Compose({RandomCrop(28, 4), RandomHorizontalFlip(), Normalize({0.2860}, {0.3530})}));
}

}  // namespace

BENCHMARK(BM_FashionPass)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FashionPassAugmented)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK_MAIN();
