// Deliberately wrong kernels: each is a classic CUDA bug that the emulator's tests prove is
// caught (a wrong result under some thread order, a launch failure with a report, or an error).
#include "kernels.h"

// Missing __syncthreads between writing the tile and reading a neighbour's element.
__global__ void missing_sync_kernel(const float* in, float* out, int n) {
  __shared__ float tile[256];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? in[i] : 0.0f;
  const float neighbour = tile[(threadIdx.x + 1) % blockDim.x];
  if (i < n) out[i] = neighbour;
}

void launch_missing_sync(const float* in, float* out, int n, cudaStream_t stream) {
  simt::launch(missing_sync_kernel, (n + 255) / 256, 256, 0, stream, in, out, n);
}

// Barriers in both branches of a divergent if: two different barriers.
__global__ void divergent_barrier_kernel(float* data) {
  if (threadIdx.x < blockDim.x / 2) {
    data[threadIdx.x] += 1.0f;
    __syncthreads();
  } else {
    data[threadIdx.x] -= 1.0f;
    __syncthreads();
  }
}

void launch_divergent_barrier(float* data, int threads, cudaStream_t stream) {
  simt::launch(divergent_barrier_kernel, 1, threads, 0, stream, data);
}

// Threads past 200 return early; the others wait at the barrier for them forever.
__global__ void return_before_barrier_kernel(float* data) {
  __shared__ float tile[256];
  if (threadIdx.x >= 200) return;
  tile[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = tile[199 - threadIdx.x];
}

void launch_return_before_barrier(float* data, cudaStream_t stream) {
  simt::launch(return_before_barrier_kernel, 1, 256, 0, stream, data);
}

// Lanes 0-15 meet with mask 0x0000ffff but read lane 16, outside it.
__global__ void shuffle_outside_mask_kernel(int* data) {
  const int lane = threadIdx.x % 32;
  const unsigned mask = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  data[threadIdx.x] = __shfl_sync(mask, data[threadIdx.x], 16);
}

void launch_shuffle_outside_mask(int* data, cudaStream_t stream) {
  simt::launch(shuffle_outside_mask_kernel, 1, 32, 0, stream, data);
}

// A full-warp shuffle that only half of the warp executes.
__global__ void half_warp_full_mask_kernel(int* data) {
  int v = data[threadIdx.x];
  if (threadIdx.x % 32 < 16) v = __shfl_down_sync(0xffffffffu, v, 1);
  data[threadIdx.x] = v;
}

void launch_half_warp_full_mask(int* data, cudaStream_t stream) {
  simt::launch(half_warp_full_mask_kernel, 1, 32, 0, stream, data);
}

// Lane 0 names the whole warp while the others name only themselves and lane 0.
__global__ void mismatched_masks_kernel(int* data) {
  const int lane = threadIdx.x % 32;
  const unsigned mask = lane == 0 ? 0xffffffffu : (1u | (1u << lane));
  data[threadIdx.x] = __shfl_sync(mask, data[threadIdx.x], 0);
}

void launch_mismatched_masks(int* data, cudaStream_t stream) {
  simt::launch(mismatched_masks_kernel, 1, 32, 0, stream, data);
}

// Reads dynamic shared memory that no thread wrote.
__global__ void uninitialised_shared_kernel(float* out, int n) {
  SIMT_DYNAMIC_SHARED(float, buffer);
  if (static_cast<int>(threadIdx.x) < n) out[threadIdx.x] = buffer[threadIdx.x] * 2.0f;
}

void launch_uninitialised_shared(float* out, int n, cudaStream_t stream) {
  simt::launch(uninitialised_shared_kernel, 1, n, n * sizeof(float), stream, out, n);
}

__global__ void trap_kernel(int* data) {
  if (data[threadIdx.x] < 0) __trap();
}

void launch_trap(int* data, cudaStream_t stream) {
  simt::launch(trap_kernel, 1, 32, 0, stream, data);
}

__global__ void huge_block_kernel(float* data) { data[threadIdx.x] = 0.0f; }

void launch_huge_block(float* data, cudaStream_t stream) {
  simt::launch(huge_block_kernel, 1, 2048, 0, stream, data);
}

// i <= n instead of i < n: one element past the end of the buffer.
__global__ void off_by_one_kernel(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;
}

void launch_off_by_one(float* out, int n, cudaStream_t stream) {
  simt::launch(off_by_one_kernel, (n + 1 + 63) / 64, 64, 0, stream, out, n);
}

// Unbounded recursion with a large frame: the fiber's stack overflows into its guard page.
__device__ float deep(volatile float* sink, int depth) {
  volatile float frame[256];
  frame[depth % 256] = static_cast<float>(depth);
  if (depth > 1000000) return frame[0];
  return deep(sink, depth + 1) + frame[depth % 256];
}

__global__ void stack_overflow_kernel(float* out) { out[threadIdx.x] = deep(out, 0); }

void launch_stack_overflow(float* out, cudaStream_t stream) {
  simt::launch(stack_overflow_kernel, 1, 1, 0, stream, out);
}

// Every lane passes mask 0x1: lanes 1-31 are not in their own mask.
__global__ void caller_outside_mask_kernel(int* data) {
  data[threadIdx.x] = __shfl_sync(0x1u, data[threadIdx.x], 0);
}

void launch_caller_outside_mask(int* data, cudaStream_t stream) {
  simt::launch(caller_outside_mask_kernel, 1, 32, 0, stream, data);
}

// A block of 16 threads: the full mask names 16 lanes that do not exist.
__global__ void mask_beyond_block_kernel(int* data) {
  data[threadIdx.x] = __shfl_xor_sync(0xffffffffu, data[threadIdx.x], 1);
}

void launch_mask_beyond_block(int* data, cudaStream_t stream) {
  simt::launch(mask_beyond_block_kernel, 1, 16, 0, stream, data);
}
