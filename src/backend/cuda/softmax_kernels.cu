// softmax / log_softmax on the device over contiguous (outer, n, inner) tensors. One fused kernel
// per layout, each reading a row twice: an online pass for (max, sum of exp(x - max)) combined
// across threads by log-sum-exp's rescaling rule, then the writing pass.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <limits>

#include "backend/cuda/reduce_kernels.cuh"

namespace ember::cuda_kernels {

namespace {

// y = softmax_exp(x - m) / s or (x - m) - log(s) for a row whose statistics are (m, s).
template <class T, bool Log>
struct SoftmaxWriter {
  using C = compute_t<T>;
  C m, scale;
  __device__ SoftmaxWriter(rd::LseAcc<C> a) : m(a.max) {
    // As the CPU: a +inf maximum makes exp(inf - inf) = NaN part of the sum.
    const C s =
        a.max == std::numeric_limits<C>::infinity() ? std::numeric_limits<C>::quiet_NaN() : a.sum;
    scale = Log ? static_cast<C>(std::log(s)) : C(1) / s;
  }
  __device__ T operator()(T x) const {
    const C v = static_cast<C>(x) - m;
    if constexpr (Log)
      return cast<T>(v - scale);
    else
      return cast<T>(rd::softmax_exp<C>(v) * scale);
  }
};

// Rows of n contiguous elements; blockDim (tpr, kReduceThreads / tpr): a warp per row (tpr 32) or
// a block per row (tpr kReduceThreads).
template <class T, bool Log>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSmOf<T>)
    softmax_rows_kernel(const T* in, T* out, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  using A = rd::LseAcc<C>;
  const rd::LogSumExpOp<C, C> op;
  __shared__ A smem[kReduceThreads / kWarp];
  const int tpr = blockDim.x;
  const int64_t per_block = blockDim.y;
  for (int64_t base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    const T* x = in + (active ? row * n : 0);
    T* y = out + (active ? row * n : 0);
    A a = op.init();
    if (active) {
      for (int64_t i = threadIdx.x; i < n; i += tpr) a = op.reduce(a, static_cast<C>(x[i]));
    }
    if (tpr > kWarp) {
      a = block_reduce(op, a, smem);
      if (threadIdx.x == 0) smem[0] = a;
      __syncthreads();
      a = smem[0];
      __syncthreads();
    } else {
      a = group_reduce(op, a, kWarp);
      a = {__shfl_sync(kFullMask, a.max, 0), __shfl_sync(kFullMask, a.sum, 0)};
    }
    if (active) {
      const SoftmaxWriter<T, Log> write(a);
      for (int64_t i = threadIdx.x; i < n; i += tpr) y[i] = write(x[i]);
    }
  }
}

// softmax along the middle dim of (outer, n, inner); blockDim (kOuterTile, rows): thread x takes
// column j of a tile of adjacent columns (coalesced), the block's rows split n.
template <class T, bool Log>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSmOf<T>)
    softmax_columns_kernel(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using C = compute_t<T>;
  using A = rd::LseAcc<C>;
  const rd::LogSumExpOp<C, C> op;
  __shared__ A smem[kReduceThreads];
  const int rows = blockDim.y;
  const int64_t tiles_per_outer = (inner + kOuterTile - 1) / kOuterTile;
  for (int64_t t = blockIdx.x; t < outer * tiles_per_outer; t += gridDim.x) {
    const int64_t o = t / tiles_per_outer;
    const int64_t j = (t % tiles_per_outer) * kOuterTile + threadIdx.x;
    const bool active = j < inner;
    const T* x = in + o * n * inner + (active ? j : 0);
    T* y = out + o * n * inner + (active ? j : 0);
    A a = op.init();
    if (active) {
      for (int64_t i = threadIdx.y; i < n; i += rows)
        a = op.reduce(a, static_cast<C>(x[i * inner]));
    }
    smem[threadIdx.y * kOuterTile + threadIdx.x] = a;
    __syncthreads();
    a = smem[threadIdx.x];
    for (int r = 1; r < rows; ++r) a = op.combine(a, smem[r * kOuterTile + threadIdx.x]);
    __syncthreads();
    if (active) {
      const SoftmaxWriter<T, Log> write(a);
      for (int64_t i = threadIdx.y; i < n; i += rows) y[i * inner] = write(x[i * inner]);
    }
  }
}

template <class T, bool Log>
cudaError_t run_softmax(const void* in_v, void* out_v, int64_t outer, int64_t n, int64_t inner,
                        cudaStream_t stream) {
  const T* in = static_cast<const T*>(in_v);
  T* out = static_cast<T*>(out_v);
  if (inner == 1) {
    const int tpr = n > 32 * kWarp ? kReduceThreads : kWarp;
    const int per_block = kReduceThreads / tpr;
    simt::launch(softmax_rows_kernel<T, Log>, dim3(grid_for(outer, per_block)),
                 dim3(tpr, per_block), 0, stream, in, out, outer, n);
  } else {
    const int64_t tiles = outer * ((inner + kOuterTile - 1) / kOuterTile);
    simt::launch(softmax_columns_kernel<T, Log>, dim3(grid_for(tiles, 1)),
                 dim3(kOuterTile, kReduceThreads / kOuterTile), 0, stream, in, out, outer, n,
                 inner);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t softmax(bool log, DType dtype, const void* in, void* out, int64_t outer, int64_t n,
                    int64_t inner, cudaStream_t stream) {
  return visit_float_dtype(dtype, log ? "log_softmax" : "softmax", [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    if (log) return run_softmax<T, true>(in, out, outer, n, inner, stream);
    return run_softmax<T, false>(in, out, outer, n, inner, stream);
  });
}

}  // namespace ember::cuda_kernels
