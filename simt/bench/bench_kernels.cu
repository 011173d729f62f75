// Micro-benchmark kernels for the SIMT emulator: barriers, shuffles, empty launches, add.
#include "bench_kernels.h"

__global__ void barrier_loop_kernel(int iters) {
  for (int i = 0; i < iters; ++i) __syncthreads();
}

__global__ void shuffle_loop_kernel(int iters, int* out) {
  int v = threadIdx.x;
  for (int i = 0; i < iters; ++i) v += __shfl_xor_sync(0xffffffffu, v, i & 31);
  if (v == 12345) out[0] = v;  // keeps the loop alive
}

__global__ void empty_kernel() {}

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    c[i] = a[i] + b[i];
  }
}

void bench_barriers(int threads, int iters) {
  simt::launch(barrier_loop_kernel, 1, threads, 0, nullptr, iters);
}

void bench_shuffles(int threads, int iters, int* out) {
  simt::launch(shuffle_loop_kernel, 1, threads, 0, nullptr, iters, out);
}

void bench_empty(int blocks, int threads) {
  simt::launch(empty_kernel, blocks, threads, 0, nullptr);
}

void bench_add(const float* a, const float* b, float* c, int n, int blocks, int threads) {
  simt::launch(add_kernel, blocks, threads, 0, nullptr, a, b, c, n);
}
