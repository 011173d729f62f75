// Prints what the SIMT emulator costs: a __syncthreads, a warp shuffle, an empty launch, a block,
// and element-wise throughput. Not a test: timings vary between machines and runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "bench_kernels.h"

namespace {

// Best of five runs of f, in seconds.
double best_seconds(const std::function<void()>& f) {
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    cudaDeviceSynchronize();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

void check(const char* what) {
  if (const cudaError_t e = cudaGetLastError()) {
    std::fprintf(stderr, "%s failed: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

int main() {
  // One worker: the figures are per core, comparable between machines.
  simt::set_workers(1);
  std::printf("SIMT emulator micro-benchmarks (1 worker, best of 5)\n");

  const int iters = 200;
  for (int threads : {32, 256, 1024}) {
    const double s = best_seconds([&] { bench_barriers(threads, iters); });
    check("barriers");
    std::printf("  __syncthreads, block of %4d: %8.2f us\n", threads, s / iters * 1e6);
  }

  int* out = nullptr;
  cudaMalloc(reinterpret_cast<void**>(&out), sizeof(int));
  {
    const double s = best_seconds([&] { bench_shuffles(256, iters, out); });
    check("shuffles");
    std::printf("  __shfl_xor_sync round, 256 threads: %8.2f us\n", s / iters * 1e6);
  }

  {
    const int launches = 2000;
    const double s = best_seconds([&] {
      for (int i = 0; i < launches; ++i) bench_empty(1, 32);
    });
    check("empty launch");
    std::printf("  empty launch (1 block of 32): %8.2f us\n", s / launches * 1e6);
    const int blocks = 4096;
    const double sb = best_seconds([&] { bench_empty(blocks, 32); });
    std::printf("  per block (32 threads): %8.2f us\n", sb / blocks * 1e6);
  }

  {
    const int n = 1 << 22;
    float *a, *b, *c;
    cudaMalloc(reinterpret_cast<void**>(&a), n * sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&b), n * sizeof(float));
    cudaMalloc(reinterpret_cast<void**>(&c), n * sizeof(float));
    cudaMemset(a, 0, n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(float));
    const double grid_stride = best_seconds([&] { bench_add(a, b, c, n, 64, 256); });
    const double per_thread = best_seconds([&] { bench_add(a, b, c, n, n / 256, 256); });
    check("add");
    std::printf("  add, 4M elements, grid-stride: %.2e elem/s\n", n / grid_stride);
    std::printf("  add, 4M elements, one per thread: %.2e elem/s\n", n / per_thread);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
  cudaFree(out);
  return 0;
}
