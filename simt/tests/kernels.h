// Host launchers for the emulator's test kernels (kernels.cu, half_kernels.cu, buggy.cu). Each
// launches on stream and returns without synchronising, like any CUDA launch.
#pragma once

#include "simt/simt.h"

// ---- kernels.cu: correct kernels ----------------------------------------------------------------
// c = a + b with a grid-stride loop; (n)
void launch_add(const float* a, const float* b, float* c, int n, int blocks, int threads,
                cudaStream_t stream);
// *out += sum(x): shuffles within warps, shared memory across them, one atomicAdd per block.
void launch_block_sum(const float* x, float* out, int n, int blocks, int threads,
                      cudaStream_t stream);
// *count += number of x[i] > 0, counted with __ballot_sync.
void launch_count_positive(const float* x, unsigned* count, int n, cudaStream_t stream);
// out (cols, rows) = in (rows, cols) transposed, through a 32x33 shared tile.
void launch_transpose(const float* in, float* out, int rows, int cols, cudaStream_t stream);
// C (m, n) = A (m, k) @ B (k, n), tile x tile blocks staged in dynamic shared memory.
void launch_matmul(const float* a, const float* b, float* c, int m, int n, int k, int tile,
                   cudaStream_t stream);
// out = in reversed, staged through n floats of dynamic shared memory (one block).
void launch_reverse(const float* in, float* out, int n, cudaStream_t stream);
// Device math: out[4i..4i+3] = log(x[i]), sin(x[i]), (double)expf((float)x[i]), and
// x[i] * y[i] + 1 written as a plain expression; fused[i] = __dadd_rn(__dmul_rn(x[i], y[i]), 1).
void launch_device_math(const double* x, const double* y, double* out, double* rounded, int n,
                        cudaStream_t stream);
// Lets launch_reverse use `bytes` of dynamic shared memory.
cudaError_t allow_reverse_shared(int bytes);
// Every atomic in CUDA's set, from `threads` threads over several blocks; results in `out`.
struct AtomicResults {
  int add_i, sub_i, max_i, min_i, exch_i, cas_i;
  unsigned add_u, and_u, or_u, xor_u, inc_u, dec_u;
  unsigned long long add_ull, max_ull;
  long long min_ll;
  float add_f;
  double add_d;
};
void launch_atomics(AtomicResults* out, int threads, cudaStream_t stream);
// out[i] = v + i for each thread: the kernel changes its by-value parameter v.
void launch_bump_param(int* out, int v, int n, cudaStream_t stream);
// Per-warp collectives of a block of `threads`: out[t] = {shfl idx, up, down, xor, ballot,
// any, all, match_any, reduce_add, activemask} for thread t.
void launch_warp_ops(const int* in, unsigned* out, int threads, cudaStream_t stream);
// Lanes 0-15 and 16-31 shuffle in two separate groups (masks 0x0000ffff and 0xffff0000).
void launch_split_warp(const int* in, int* out, cudaStream_t stream);
// out[0] = count, out[1] = and, out[2] = or of (in[t] > 0) over a block, via __syncthreads_*.
void launch_barrier_reductions(const int* in, int* out, int threads, cudaStream_t stream);
// out[i] = table[i % 16] * x[i] with table in __constant__ memory.
void launch_scale_by_table(const float* x, float* out, int n, cudaStream_t stream);
cudaError_t set_scale_table(const float* values16);
// out[t] = (threadIdx, blockIdx, blockDim, gridDim) flattened, for a 3-D launch.
void launch_indices(unsigned* out, dim3 grid, dim3 block, cudaStream_t stream);
// Thread 0 waits (spinning with __nanosleep) for a flag the last thread sets.
void launch_spin_flag(int* out, int threads, cudaStream_t stream);

// ---- half_kernels.cu: fp16 and bf16 -------------------------------------------------------------
void launch_haxpy(__half a, const __half* x, __half* y, int n, cudaStream_t stream);
void launch_hadd2(const __half2* a, const __half2* b, __half2* c, int n, cudaStream_t stream);
// y = exp(x) * sqrt(|x|) + rsqrt(1 + x*x) in bf16 math.
void launch_bf16_math(const __nv_bfloat16* x, __nv_bfloat16* y, int n, cudaStream_t stream);
// *out = sum of x, reduced in float across each warp with __half shuffles.
void launch_half_warp_sum(const __half* x, float* out, int n, cudaStream_t stream);
// Every thread adds `step` to one __half and one __nv_bfloat16 counter.
void launch_half_atomics(__half* h, __nv_bfloat16* b, __half step_h, __nv_bfloat16 step_b,
                         int threads, cudaStream_t stream);
// out = the kernel-side rounding conversions of x: rn, rd, ru to int, then __hfma(x, x, x).
void launch_half_convert(const __half* x, int* rn, int* rd, int* ru, __half* fma, int n,
                         cudaStream_t stream);

// ---- buggy.cu: deliberately wrong kernels -------------------------------------------------------
void launch_missing_sync(const float* in, float* out, int n, cudaStream_t stream);
void launch_divergent_barrier(float* data, int threads, cudaStream_t stream);
void launch_return_before_barrier(float* data, cudaStream_t stream);
void launch_shuffle_outside_mask(int* data, cudaStream_t stream);
void launch_half_warp_full_mask(int* data, cudaStream_t stream);
void launch_mismatched_masks(int* data, cudaStream_t stream);
void launch_uninitialised_shared(float* out, int n, cudaStream_t stream);
void launch_trap(int* data, cudaStream_t stream);
void launch_huge_block(float* data, cudaStream_t stream);
void launch_off_by_one(float* out, int n, cudaStream_t stream);
void launch_stack_overflow(float* out, cudaStream_t stream);
void launch_caller_outside_mask(int* data, cudaStream_t stream);
void launch_mask_beyond_block(int* data, cudaStream_t stream);
