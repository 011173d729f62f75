// Reduction kernels over a ReduceLayout (see reduce_kernels.h for the paths), written once for
// any "reducer": init / step (fold one input element) / combine / store. Include after
// simt/simt.h; instantiated by reduce_basic.cu, reduce_stats.cu and arg_reduce.cu.
#pragma once

#include <type_traits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/reduce_kernels.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember::cuda_kernels {

// ---- accumulators on the device: floats in their own precision (16-bit floats compute in
// float), integers and bool in int64 -------------------------------------------------------------

template <class C>
using device_acc_t = std::conditional_t<std::is_floating_point_v<C>, C, int64_t>;

template <ReduceOp Op, class C>
struct device_functor {
  using type = reduce_functor_t<Op, C>;  // max/min and any/all carry no accumulator choice
};
#define EMBER_DEVICE_FUNCTOR(Name, ...)      \
  template <class C>                         \
  struct device_functor<ReduceOp::Name, C> { \
    using type = __VA_ARGS__;                \
  };
EMBER_DEVICE_FUNCTOR(Sum, rd::SumOp<C, device_acc_t<C>>)
EMBER_DEVICE_FUNCTOR(Prod, rd::ProdOp<C, device_acc_t<C>>)
EMBER_DEVICE_FUNCTOR(Mean, rd::MeanOp<C, C>)
EMBER_DEVICE_FUNCTOR(Var, rd::VarOp<C, false, C>)
EMBER_DEVICE_FUNCTOR(Std, rd::VarOp<C, true, C>)
EMBER_DEVICE_FUNCTOR(Norm0, rd::NormOp<C, 0, C>)
EMBER_DEVICE_FUNCTOR(Norm1, rd::NormOp<C, 1, C>)
EMBER_DEVICE_FUNCTOR(Norm2, rd::NormOp<C, 2, C>)
EMBER_DEVICE_FUNCTOR(NormInf, rd::NormOp<C, 3, C>)
EMBER_DEVICE_FUNCTOR(NormNegInf, rd::NormOp<C, 4, C>)
EMBER_DEVICE_FUNCTOR(NormP, rd::NormOp<C, 5, C>)
EMBER_DEVICE_FUNCTOR(LogSumExp, rd::LogSumExpOp<C, C>)
#undef EMBER_DEVICE_FUNCTOR
template <ReduceOp Op, class C>
using device_functor_t = typename device_functor<Op, C>::type;

// ---- reducers -----------------------------------------------------------------------------------

// A functor from reduce_ops.h reading T and writing its projection as Out.
template <class F, class T, class Out>
struct ValueReducer {
  using C = compute_t<T>;
  using acc_t = typename F::acc_t;
  F op;
  const T* in;
  Out* out;

  __device__ acc_t init() const { return op.init(); }
  __device__ C load(int64_t off) const { return static_cast<C>(in[off]); }
  __device__ acc_t fold(acc_t a, C x, int64_t) const { return op.reduce(a, x); }
  __device__ acc_t step(acc_t a, int64_t off, int64_t r) const { return fold(a, load(off), r); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return op.combine(a, b); }
  __device__ void store(int64_t off, acc_t a) const { out[off] = cast<Out>(op.project(a)); }
};

// max / min with the index of the first extreme along the single reduced dim.
template <class T, bool IsMax>
struct IndexReducer {
  using C = compute_t<T>;
  using Op = rd::ArgOp<C, IsMax>;
  using acc_t = typename Op::acc_t;
  const T* in;
  T* values;
  int64_t* indices;

  __device__ acc_t init() const { return Op().init(); }
  __device__ C load(int64_t off) const { return static_cast<C>(in[off]); }
  __device__ acc_t fold(acc_t a, C x, int64_t r) const { return Op().reduce(a, x, r); }
  __device__ acc_t step(acc_t a, int64_t off, int64_t r) const { return fold(a, load(off), r); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return Op().combine(a, b); }
  __device__ void store(int64_t off, acc_t a) const {
    values[off] = cast<T>(a.value);
    indices[off] = a.index;
  }
};

// ---- kernels ------------------------------------------------------------------------------------

__device__ inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Folds reduced positions r, r + step, ... below r1 of the output at in_off into a. With one
// reduced dim the loop issues four independent loads before folding them (in order), so several
// memory requests per thread are in flight.
template <class R>
__device__ inline typename R::acc_t fold_range(const R& red, typename R::acc_t a,
                                               const ReduceLayout& l, int64_t in_off, int64_t r,
                                               int64_t r1, int64_t step) {
  if (l.nr == 1) {
    const int64_t s = l.rin[0];
    for (; r + 3 * step < r1; r += 4 * step) {
      const auto x0 = red.load(in_off + r * s);
      const auto x1 = red.load(in_off + (r + step) * s);
      const auto x2 = red.load(in_off + (r + 2 * step) * s);
      const auto x3 = red.load(in_off + (r + 3 * step) * s);
      a = red.fold(a, x0, r);
      a = red.fold(a, x1, r + step);
      a = red.fold(a, x2, r + 2 * step);
      a = red.fold(a, x3, r + 3 * step);
    }
  }
  for (; r < r1; r += step) a = red.step(a, in_off + l.reduced_offset(r), r);
  return a;
}

// Inner: blockDim (group, kReduceThreads / group), or (kReduceThreads, 1) for a block per output.
// Thread x of an output's group folds reduced positions x, x + group, ... of chunk blockIdx.y,
// adjacent lanes reading adjacent elements when the reduced dim is contiguous.
// partial == nullptr: store results; otherwise partial[chunk * n_out + o] = the accumulator.
template <class R>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSm)
    reduce_inner_kernel(R red, ReduceLayout l, int64_t chunk_len, typename R::acc_t* partial) {
  using A = typename R::acc_t;
  __shared__ A smem[kReduceThreads / kWarp];
  const int group = blockDim.x;
  const int64_t per_block = blockDim.y;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk_len;
  const int64_t r1 = min64(l.n_red, r0 + chunk_len);
  for (int64_t base = blockIdx.x * per_block; base < l.n_out; base += gridDim.x * per_block) {
    const int64_t o = base + threadIdx.y;
    int64_t in_off = 0, out_off = 0;
    A a = red.init();
    if (o < l.n_out) {
      l.kept_offsets(o, in_off, out_off);
      a = fold_range(red, a, l, in_off, r0 + threadIdx.x, r1, group);
    }
    a = group > kWarp ? block_reduce(red, a, smem) : group_reduce(red, a, group);
    if (threadIdx.x == 0 && o < l.n_out) {
      if (partial)
        partial[blockIdx.y * l.n_out + o] = a;
      else
        red.store(out_off, a);
    }
  }
}

// Outer: blockDim (kOuterTile, rows). Thread (x, y) folds output base + x over reduced positions
// y, y + rows, ... of chunk blockIdx.y: a warp reads kOuterTile adjacent input elements per step.
// The rows' accumulators are combined in row order through shared memory.
template <class R>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSm)
    reduce_outer_kernel(R red, ReduceLayout l, int64_t chunk_len, typename R::acc_t* partial) {
  using A = typename R::acc_t;
  __shared__ A smem[kReduceThreads];
  const int rows = blockDim.y;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * chunk_len;
  const int64_t r1 = min64(l.n_red, r0 + chunk_len);
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kOuterTile; base < l.n_out;
       base += static_cast<int64_t>(gridDim.x) * kOuterTile) {
    const int64_t o = base + threadIdx.x;
    int64_t in_off = 0, out_off = 0;
    A a = red.init();
    if (o < l.n_out) {
      l.kept_offsets(o, in_off, out_off);
      a = fold_range(red, a, l, in_off, r0 + threadIdx.y, r1, rows);
    }
    smem[threadIdx.y * kOuterTile + threadIdx.x] = a;
    __syncthreads();
    if (threadIdx.y == 0 && o < l.n_out) {
      for (int y = 1; y < rows; ++y) a = red.combine(a, smem[y * kOuterTile + threadIdx.x]);
      if (partial)
        partial[blockIdx.y * l.n_out + o] = a;
      else
        red.store(out_off, a);
    }
    __syncthreads();
  }
}

// Second pass of a split reduction: a warp per output combines its chunks' partials.
// blockDim (kWarp, kReduceThreads / kWarp).
template <class R>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSm)
    reduce_finalize_kernel(R red, ReduceLayout l, int64_t chunks,
                           const typename R::acc_t* partial) {
  using A = typename R::acc_t;
  const int64_t per_block = blockDim.y;
  for (int64_t base = blockIdx.x * per_block; base < l.n_out; base += gridDim.x * per_block) {
    const int64_t o = base + threadIdx.y;
    A a = red.init();
    if (o < l.n_out) {
      for (int64_t c = threadIdx.x; c < chunks; c += kWarp) {
        a = red.combine(a, partial[c * l.n_out + o]);
      }
    }
    a = group_reduce(red, a, kWarp);
    if (threadIdx.x == 0 && o < l.n_out) {
      int64_t in_off, out_off;
      l.kept_offsets(o, in_off, out_off);
      red.store(out_off, a);
    }
  }
}

template <class R>
cudaError_t launch_reduce(const R& red, const ReduceLayout& l, const ReducePlan& p, void* workspace,
                          cudaStream_t stream) {
  using A = typename R::acc_t;
  static_assert(sizeof(A) <= kMaxAccBytes, "the workspace is sized for kMaxAccBytes");
  A* partial = p.chunks > 1 ? static_cast<A*>(workspace) : nullptr;
  const unsigned chunks = static_cast<unsigned>(p.chunks);
  if (p.path == ReducePath::Outer) {
    const dim3 block(kOuterTile, kReduceThreads / kOuterTile);
    const dim3 grid(grid_for(l.n_out, kOuterTile), chunks);
    simt::launch(reduce_outer_kernel<R>, grid, block, 0, stream, red, l, p.chunk_len, partial);
  } else {
    const int group = p.group;
    const int per_block = group >= kReduceThreads ? 1 : kReduceThreads / group;
    const dim3 block(group, per_block);
    const dim3 grid(grid_for(l.n_out, per_block), chunks);
    simt::launch(reduce_inner_kernel<R>, grid, block, 0, stream, red, l, p.chunk_len, partial);
  }
  if (partial) {
    const int per_block = kReduceThreads / kWarp;
    simt::launch(reduce_finalize_kernel<R>, dim3(grid_for(l.n_out, per_block)),
                 dim3(kWarp, per_block), 0, stream, red, l, p.chunks,
                 static_cast<const A*>(partial));
  }
  return cudaGetLastError();
}

}  // namespace ember::cuda_kernels
