// Normalisation and dropout on the device. Row statistics (layer/group/rms norm): a warp per
// short row or a block per long row, Welford merged with shuffles. Channel statistics and the
// weight/bias gradients: a block per channel, or for (batch, channels) inputs a tile of 32
// adjacent channels per block with the batch split across its rows, so loads stay coalesced.
// The running-statistic update is fused into the statistics kernel; normalise + affine and the
// input gradient are single element passes over saved (mean, rstd).
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstdint>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/kernel_utils.h"
#include "backend/cuda/norm_kernels.h"
#include "core/dispatch.h"

namespace ember::nrm {

// Shuffle of the backward's pair of sums (block_reduce finds it by argument lookup).
template <class A>
__device__ inline Sum2<A> shfl_down(Sum2<A> v, int delta) {
  return {cuda_kernels::shfl_down(v.a, delta), cuda_kernels::shfl_down(v.b, delta)};
}

}  // namespace ember::nrm

namespace ember::cuda_kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kTile = 32;  // channels per block of the column kernels

// Threads per row: a warp for short rows, the whole block for long ones.
int threads_per_row(int64_t len) { return len > 4 * kWarp ? kThreads : kWarp; }

// The row's two sums in every thread of the row (blockDim.x threads: a warp or the block).
template <class A>
__device__ inline nrm::Sum2<A> row_allreduce(nrm::Sum2<A> a, nrm::Sum2<A>* smem) {
  const nrm::Sum2Op<A> op;
  if (blockDim.x > kWarp) {
    a = block_reduce(op, a, smem);
    if (threadIdx.x == 0) smem[0] = a;
    __syncthreads();
    a = smem[0];
    __syncthreads();
    return a;
  }
  a = group_reduce(op, a, kWarp);
  return {__shfl_sync(kFullMask, a.a, 0), __shfl_sync(kFullMask, a.b, 0)};
}

// ---- statistics ---------------------------------------------------------------------------------

// blockDim (tpr, kThreads / tpr): each row of threads takes one row of len elements.
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSmOf<T>)
    row_stats_kernel(const T* x, nrm::acc_t<T>* mean, nrm::acc_t<T>* rstd, int64_t rows,
                     int64_t len, double eps, bool rms) {
  using A = nrm::acc_t<T>;
  using Acc = rd::WelfordAcc<A>;
  const nrm::Welford<A> op;
  __shared__ Acc smem[kThreads / kWarp];
  const int tpr = blockDim.x;
  const int64_t per_block = blockDim.y;
  for (int64_t base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    Acc a = op.init();
    if (active) {
      const T* r = x + row * len;
      for (int64_t i = threadIdx.x; i < len; i += tpr) {
        const A v = static_cast<A>(r[i]);
        a = op.reduce(a, rms ? v * v : v);
      }
    }
    if (tpr > kWarp)
      a = block_reduce(op, a, smem);
    else
      a = group_reduce(op, a, kWarp);
    if (active && threadIdx.x == 0) nrm::finish_stats(a, eps, rms, mean[row], rstd[row]);
  }
}

// Per-channel reductions over (batch, inner): what is summed and what is written at the end.
template <class T>
struct StatsPolicy {
  using A = nrm::acc_t<T>;
  using acc_t = rd::WelfordAcc<A>;
  const T* x;
  A* mean;
  A* rstd;
  T* running_mean;
  T* running_var;
  NormParams p;

  __device__ acc_t init() const { return {A(0), A(0), A(0)}; }
  __device__ acc_t combine(acc_t a, acc_t b) const { return nrm::Welford<A>().combine(a, b); }
  __device__ acc_t add(acc_t a, int64_t off, int64_t, int64_t) const {
    return nrm::Welford<A>().reduce(a, static_cast<A>(x[off]));
  }
  __device__ void finish(int64_t c, acc_t a) const {
    nrm::finish_stats(a, p.eps, false, mean[c], rstd[c]);
    if (running_mean) {
      A m = static_cast<A>(running_mean[c]), v = static_cast<A>(running_var[c]);
      nrm::update_running<A>(a.mean, a.n > A(0) ? a.m2 / a.n : A(0), a.n, p.momentum, m, v);
      running_mean[c] = cast<T>(m);
      running_var[c] = cast<T>(v);
    }
  }
};

// sum(dy) and sum(dy * xhat) per channel: grad_bias, grad_weight and batch norm's input gradient.
template <class T>
struct GradPolicy {
  using A = nrm::acc_t<T>;
  using acc_t = nrm::Sum2<A>;
  const T* dy;
  const T* x;
  const A* mean;
  const A* rstd;
  T* dw;
  T* db;
  acc_t* sums;
  NormParams p;

  __device__ acc_t init() const { return {A(0), A(0)}; }
  __device__ acc_t combine(acc_t a, acc_t b) const { return {a.a + b.a, a.b + b.b}; }
  __device__ acc_t add(acc_t a, int64_t off, int64_t b, int64_t c) const {
    const int64_t s = p.stat_of(b, c);
    const A d = static_cast<A>(dy[off]);
    return {a.a + d, a.b + d * (static_cast<A>(x[off]) - mean[s]) * rstd[s]};
  }
  __device__ void finish(int64_t c, acc_t a) const {
    if (dw) dw[c] = cast<T>(a.b);
    if (db) db[c] = cast<T>(a.a);
    if (sums) sums[c] = a;
  }
};

// A block per channel (grid-stride over channels), its threads over (batch, inner).
template <class P>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) channel_reduce_kernel(P pol) {
  using Acc = typename P::acc_t;
  __shared__ Acc smem[kThreads / kWarp];
  const NormParams& p = pol.p;
  for (int64_t c = blockIdx.x; c < p.channels; c += gridDim.x) {
    Acc a = pol.init();
    if (p.inner >= blockDim.x) {
      for (int64_t b = 0; b < p.batch; ++b) {
        const int64_t plane = (b * p.channels + c) * p.inner;
        for (int64_t k = threadIdx.x; k < p.inner; k += blockDim.x) a = pol.add(a, plane + k, b, c);
      }
    } else {
      const int64_t n = p.batch * p.inner;
      for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
        const int64_t b = j / p.inner, k = j - b * p.inner;
        a = pol.add(a, (b * p.channels + c) * p.inner + k, b, c);
      }
    }
    a = block_reduce(pol, a, smem);
    if (threadIdx.x == 0) pol.finish(c, a);
  }
}

// inner == 1: blockDim (kTile, rows); thread x owns a channel of the block's tile (adjacent
// channels: coalesced loads), the rows of threads split the batch, then merge in order.
template <class P>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) column_reduce_kernel(P pol) {
  using Acc = typename P::acc_t;
  __shared__ Acc smem[kThreads];
  const NormParams& p = pol.p;
  const int64_t tiles = (p.channels + kTile - 1) / kTile;
  for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const int64_t c = t * kTile + threadIdx.x;
    const bool active = c < p.channels;
    Acc a = pol.init();
    if (active) {
      for (int64_t b = threadIdx.y; b < p.batch; b += blockDim.y)
        a = pol.add(a, b * p.channels + c, b, c);
    }
    smem[threadIdx.y * kTile + threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0 && active) {
      for (unsigned r = 1; r < blockDim.y; ++r) a = pol.combine(a, smem[r * kTile + threadIdx.x]);
      pol.finish(c, a);
    }
    __syncthreads();
  }
}

template <class P>
void launch_channel_reduce(const P& pol, cudaStream_t stream) {
  const NormParams& p = pol.p;
  if (p.inner == 1) {
    const int64_t tiles = (p.channels + kTile - 1) / kTile;
    simt::launch(column_reduce_kernel<P>, grid_for(tiles, 1), dim3(kTile, kThreads / kTile), 0,
                 stream, pol);
  } else {
    simt::launch(channel_reduce_kernel<P>, grid_for(p.channels, 1), dim3(kThreads), 0, stream, pol);
  }
}

// ---- element passes -----------------------------------------------------------------------------

// Channel of element i of (batch, channels, inner) in index type I (32-bit when it fits: the
// divisions are the costly part of these memory-bound passes).
template <class I>
__device__ inline I channel_of(I i, I channels, I inner) {
  return (inner == 1 ? i : i / inner) % channels;
}

// Batch norm: per-channel statistics, one element per thread (grid-stride).
template <class T, class I>
__global__ void channel_forward_kernel(T* y, const T* x, const nrm::acc_t<T>* mean,
                                       const nrm::acc_t<T>* rstd, const T* w, const T* bias, I n,
                                       I channels, I inner) {
  using A = nrm::acc_t<T>;
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const I c = channel_of(i, channels, inner);
    const A wc = w ? static_cast<A>(w[c]) : A(1);
    const A bc = bias ? static_cast<A>(bias[c]) : A(0);
    y[i] = cast<T>(nrm::normalize<A>(static_cast<A>(x[i]), mean[c], rstd[c], wc, bc));
  }
}

// Row statistics: each row of threads loads its row's (mean, rstd) once and writes the row.
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSmOf<T>)
    row_forward_kernel(T* y, const T* x, const nrm::acc_t<T>* mean, const nrm::acc_t<T>* rstd,
                       const T* w, const T* bias, NormParams p) {
  using A = nrm::acc_t<T>;
  const int tpr = blockDim.x;
  const int64_t per_block = blockDim.y, rows = p.stats(), len = p.stat_size();
  const int64_t cpg = p.channels / p.groups;
  for (int64_t row = blockIdx.x * per_block + threadIdx.y; row < rows;
       row += gridDim.x * per_block) {
    const int64_t first = (row % p.groups) * cpg, start = row * len;
    const A m = mean[row], rs = rstd[row];
    for (int64_t i = threadIdx.x; i < len; i += tpr) {
      const int64_t c = first + (p.inner == 1 ? i : i / p.inner);
      const A wc = w ? static_cast<A>(w[c]) : A(1);
      const A bc = bias ? static_cast<A>(bias[c]) : A(0);
      y[start + i] = cast<T>(nrm::normalize<A>(static_cast<A>(x[start + i]), m, rs, wc, bc));
    }
  }
}

// Row statistics: each row of threads sums (g, g * xhat) over its row, then writes dx.
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSmOf<T>)
    row_backward_kernel(T* dx, const T* dy, const T* x, const nrm::acc_t<T>* mean,
                        const nrm::acc_t<T>* rstd, const T* w, NormParams p) {
  using A = nrm::acc_t<T>;
  using Acc = nrm::Sum2<A>;
  const nrm::Sum2Op<A> op;
  __shared__ Acc smem[kThreads / kWarp];
  const int tpr = blockDim.x;
  const int64_t per_block = blockDim.y, rows = p.stats(), len = p.stat_size();
  const int64_t cpg = p.channels / p.groups;
  for (int64_t base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    const int64_t first = active ? (row % p.groups) * cpg : 0, start = active ? row * len : 0;
    const A m = active ? mean[row] : A(0), rs = active ? rstd[row] : A(0);
    Acc a = op.init();
    if (active) {
      for (int64_t i = threadIdx.x; i < len; i += tpr) {
        const A wc = w ? static_cast<A>(w[first + i / p.inner]) : A(1);
        const A g = static_cast<A>(dy[start + i]) * wc;
        a.a += g;
        a.b += g * (static_cast<A>(x[start + i]) - m) * rs;
      }
    }
    a = row_allreduce(a, smem);
    if (active) {
      const A mg = a.a / static_cast<A>(len), mgx = a.b / static_cast<A>(len);
      for (int64_t i = threadIdx.x; i < len; i += tpr) {
        const A wc = w ? static_cast<A>(w[first + i / p.inner]) : A(1);
        const A xhat = (static_cast<A>(x[start + i]) - m) * rs;
        dx[start + i] = cast<T>(
            nrm::grad_input<A>(static_cast<A>(dy[start + i]) * wc, xhat, rs, mg, mgx, p.rms, true));
      }
    }
  }
}

// Channel statistics (batch norm): dx from the per-channel sums (training) or rstd alone.
template <class T, class I>
__global__ void channel_backward_kernel(T* dx, const T* dy, const T* x, const nrm::acc_t<T>* mean,
                                        const nrm::acc_t<T>* rstd, const T* w,
                                        const nrm::Sum2<nrm::acc_t<T>>* sums, NormParams p, I n,
                                        I channels, I inner) {
  using A = nrm::acc_t<T>;
  const A count = static_cast<A>(p.stat_size());
  const I step = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const I c = channel_of(i, channels, inner);
    const A wc = w ? static_cast<A>(w[c]) : A(1);
    const A r = rstd[c];
    const A mg = p.batch_stats ? wc * sums[c].a / count : A(0);
    const A mgx = p.batch_stats ? wc * sums[c].b / count : A(0);
    const A xhat = (static_cast<A>(x[i]) - mean[c]) * r;
    dx[i] = cast<T>(
        nrm::grad_input<A>(static_cast<A>(dy[i]) * wc, xhat, r, mg, mgx, false, p.batch_stats));
  }
}

// A thread owns whole Philox blocks, laid out as bernoulli's.
template <class T>
__global__ void dropout_kernel(T* y, bool* mask, const T* x, int64_t n, double keep, uint64_t seed,
                               uint64_t offset, const uint64_t* state) {
  cuda_kernels::philox_resolve(state, seed, offset);
  using C = compute_t<T>;
  constexpr int per = nrm::dropout_per_block<T>();
  const C scale = static_cast<C>(1.0 / keep);
  const int64_t nblocks = (n + per - 1) / per;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < nblocks;
       b += step) {
    const philox::Words w = philox::block(seed, offset, static_cast<uint64_t>(b));
    const int64_t i0 = b * per;
    const int m = n - i0 < per ? static_cast<int>(n - i0) : per;
    for (int j = 0; j < m; ++j) {
      const bool k = nrm::dropout_keep<T>(w, j, keep);
      mask[i0 + j] = k;
      y[i0 + j] = k ? cast<T>(static_cast<C>(x[i0 + j]) * scale) : cast<T>(C(0));
    }
  }
}

// Calls fn with a uint32_t when n elements can be indexed in 32 bits, else with an int64_t.
template <class Fn>
void with_index_type(int64_t n, Fn&& fn) {
  if (n <= static_cast<int64_t>(UINT32_MAX) - 2 * kMaxBlocks * kBlock)
    fn(uint32_t{});
  else
    fn(int64_t{});
}

dim3 row_block(int64_t len) {
  const int tpr = threads_per_row(len);
  return dim3(tpr, kThreads / tpr);
}

}  // namespace

cudaError_t norm_stats(DType dtype, const void* x, void* mean, void* rstd, void* running_mean,
                       void* running_var, const NormParams& p, cudaStream_t stream) {
  if (p.stats() == 0) return cudaSuccess;
  return visit_float_dtype(dtype, "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = nrm::acc_t<T>;
    if (p.per_channel) {
      const StatsPolicy<T> pol{static_cast<const T*>(x),     static_cast<A*>(mean),
                               static_cast<A*>(rstd),        static_cast<T*>(running_mean),
                               static_cast<T*>(running_var), p};
      launch_channel_reduce(pol, stream);
    } else {
      const dim3 block = row_block(p.stat_size());
      simt::launch(row_stats_kernel<T>, grid_for(p.stats(), static_cast<int>(block.y)), block, 0,
                   stream, static_cast<const T*>(x), static_cast<A*>(mean), static_cast<A*>(rstd),
                   p.stats(), p.stat_size(), p.eps, p.rms);
    }
    return cudaGetLastError();
  });
}

cudaError_t norm_forward(DType dtype, void* y, const void* x, const void* mean, const void* rstd,
                         const void* w, const void* b, const NormParams& p, cudaStream_t stream) {
  if (p.numel() == 0) return cudaSuccess;
  return visit_float_dtype(dtype, "norm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = nrm::acc_t<T>;
    if (p.per_channel) {
      with_index_type(p.numel(), [&](auto index_tag) {
        using I = decltype(index_tag);
        simt::launch(channel_forward_kernel<T, I>, grid_for(p.numel()), dim3(kBlock), 0, stream,
                     static_cast<T*>(y), static_cast<const T*>(x), static_cast<const A*>(mean),
                     static_cast<const A*>(rstd), static_cast<const T*>(w),
                     static_cast<const T*>(b), static_cast<I>(p.numel()),
                     static_cast<I>(p.channels), static_cast<I>(p.inner));
      });
    } else {
      const dim3 block = row_block(p.stat_size());
      simt::launch(row_forward_kernel<T>, grid_for(p.stats(), static_cast<int>(block.y)), block, 0,
                   stream, static_cast<T*>(y), static_cast<const T*>(x),
                   static_cast<const A*>(mean), static_cast<const A*>(rstd),
                   static_cast<const T*>(w), static_cast<const T*>(b), p);
    }
    return cudaGetLastError();
  });
}

cudaError_t norm_backward(DType dtype, void* dx, void* dw, void* db, void* sums, const void* dy,
                          const void* x, const void* mean, const void* rstd, const void* w,
                          const NormParams& p, cudaStream_t stream) {
  return visit_float_dtype(dtype, "norm backward", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = nrm::acc_t<T>;
    using S = nrm::Sum2<A>;
    const bool channel_dx = dx && p.per_channel && p.batch_stats;
    if (dw || db || channel_dx) {
      const GradPolicy<T> pol{static_cast<const T*>(dy),
                              static_cast<const T*>(x),
                              static_cast<const A*>(mean),
                              static_cast<const A*>(rstd),
                              static_cast<T*>(dw),
                              static_cast<T*>(db),
                              channel_dx ? static_cast<S*>(sums) : nullptr,
                              p};
      launch_channel_reduce(pol, stream);
      if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    if (dx && p.numel() > 0) {
      if (p.per_channel) {
        with_index_type(p.numel(), [&](auto index_tag) {
          using I = decltype(index_tag);
          simt::launch(channel_backward_kernel<T, I>, grid_for(p.numel()), dim3(kBlock), 0, stream,
                       static_cast<T*>(dx), static_cast<const T*>(dy), static_cast<const T*>(x),
                       static_cast<const A*>(mean), static_cast<const A*>(rstd),
                       static_cast<const T*>(w), static_cast<const S*>(sums), p,
                       static_cast<I>(p.numel()), static_cast<I>(p.channels),
                       static_cast<I>(p.inner));
        });
      } else {
        const dim3 block = row_block(p.stat_size());
        simt::launch(row_backward_kernel<T>, grid_for(p.stats(), static_cast<int>(block.y)), block,
                     0, stream, static_cast<T*>(dx), static_cast<const T*>(dy),
                     static_cast<const T*>(x), static_cast<const A*>(mean),
                     static_cast<const A*>(rstd), static_cast<const T*>(w), p);
      }
    }
    return cudaGetLastError();
  });
}

cudaError_t dropout(DType dtype, void* y, bool* mask, const void* x, int64_t n, double p,
                    uint64_t seed, uint64_t offset, cudaStream_t stream,
                    const uint64_t* philox_state) {
  if (n <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, "dropout", [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int per = nrm::dropout_per_block<T>();
    simt::launch(dropout_kernel<T>, grid_for((n + per - 1) / per), dim3(kBlock), 0, stream,
                 static_cast<T*>(y), mask, static_cast<const T*>(x), n, 1.0 - p, seed, offset,
                 philox_state);
    return cudaGetLastError();
  });
}

}  // namespace ember::cuda_kernels
