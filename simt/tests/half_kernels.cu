// fp16 and bf16 kernels for the emulator's tests: the device-only functions of cuda_fp16.h and
// cuda_bf16.h (fma, math, conversions, shuffles, atomics) that the emulator supplies on the host.
#include "kernels.h"

__global__ void haxpy_kernel(__half a, const __half* x, __half* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __hfma(a, x[i], y[i]);
}

void launch_haxpy(__half a, const __half* x, __half* y, int n, cudaStream_t stream) {
  simt::launch(haxpy_kernel, (n + 127) / 128, 128, 0, stream, a, x, y, n);
}

__global__ void hadd2_kernel(const __half2* a, const __half2* b, __half2* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __hadd2(__ldg(a + i), __ldg(b + i));
}

void launch_hadd2(const __half2* a, const __half2* b, __half2* c, int n, cudaStream_t stream) {
  simt::launch(hadd2_kernel, (n + 127) / 128, 128, 0, stream, a, b, c, n);
}

__global__ void bf16_math_kernel(const __nv_bfloat16* x, __nv_bfloat16* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __nv_bfloat16 v = x[i];
  const __nv_bfloat16 one = __float2bfloat16(1.0f);
  y[i] = __hfma(hexp(v), hsqrt(__habs(v)), hrsqrt(__hfma(v, v, one)));
}

void launch_bf16_math(const __nv_bfloat16* x, __nv_bfloat16* y, int n, cudaStream_t stream) {
  simt::launch(bf16_math_kernel, (n + 127) / 128, 128, 0, stream, x, y, n);
}

__global__ void half_warp_sum_kernel(const __half* x, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  __half v = i < n ? x[i] : __float2half(0.0f);
  float acc = __half2float(v);
  for (int offset = 16; offset > 0; offset /= 2) {
    // The shuffle moves a __half; the sum is kept in float.
    const __half other = __shfl_xor_sync(0xffffffffu, __float2half(acc), offset);
    acc = __half2float(__float2half(acc)) + __half2float(other);
  }
  if (threadIdx.x % 32 == 0) atomicAdd(out, acc);
}

void launch_half_warp_sum(const __half* x, float* out, int n, cudaStream_t stream) {
  simt::launch(half_warp_sum_kernel, (n + 127) / 128, 128, 0, stream, x, out, n);
}

__global__ void half_atomics_kernel(__half* h, __nv_bfloat16* b, __half step_h,
                                    __nv_bfloat16 step_b, int threads) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= threads) return;
  atomicAdd(h, step_h);
  atomicAdd(b, step_b);
}

void launch_half_atomics(__half* h, __nv_bfloat16* b, __half step_h, __nv_bfloat16 step_b,
                         int threads, cudaStream_t stream) {
  simt::launch(half_atomics_kernel, (threads + 63) / 64, 64, 0, stream, h, b, step_h, step_b,
               threads);
}

__global__ void half_convert_kernel(const __half* x, int* rn, int* rd, int* ru, __half* fma,
                                    int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  rn[i] = __half2int_rn(x[i]);
  rd[i] = __half2int_rd(x[i]);
  ru[i] = __half2int_ru(x[i]);
  fma[i] = __hfma(x[i], x[i], x[i]);
}

void launch_half_convert(const __half* x, int* rn, int* rd, int* ru, __half* fma, int n,
                         cudaStream_t stream) {
  simt::launch(half_convert_kernel, (n + 127) / 128, 128, 0, stream, x, rn, rd, ru, fma, n);
}
