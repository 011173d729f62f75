// Warp and block building blocks shared by the reduction, scan and softmax kernels: shuffles of
// any accumulator (scalars, Welford, log-sum-exp, value+index) and group-wise tree reductions.
// Include after simt/simt.h.
#pragma once

#include <type_traits>

#include "kernels/reduce_ops.h"

namespace ember::cuda_kernels {

inline constexpr unsigned kFullMask = 0xffffffffu;
inline constexpr int kWarp = 32;

// ---- shuffles of accumulators -------------------------------------------------------------------

template <class T>
__device__ inline T shfl_down(T v, int delta) {
  if constexpr (std::is_same_v<T, bool>) {
    return __shfl_down_sync(kFullMask, static_cast<int>(v), delta) != 0;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 4) {
    return static_cast<T>(__shfl_down_sync(kFullMask, static_cast<int>(v), delta));
  } else {
    return __shfl_down_sync(kFullMask, v, delta);
  }
}
template <class A>
__device__ inline rd::WelfordAcc<A> shfl_down(rd::WelfordAcc<A> v, int delta) {
  return {shfl_down(v.mean, delta), shfl_down(v.m2, delta), shfl_down(v.n, delta)};
}
template <class A>
__device__ inline rd::LseAcc<A> shfl_down(rd::LseAcc<A> v, int delta) {
  return {shfl_down(v.max, delta), shfl_down(v.sum, delta)};
}
template <class C>
__device__ inline rd::ArgAcc<C> shfl_down(rd::ArgAcc<C> v, int delta) {
  return {shfl_down(v.value, delta), shfl_down(v.index, delta)};
}

template <class T>
__device__ inline T shfl_up(T v, int delta) {
  if constexpr (std::is_same_v<T, bool>) {
    return __shfl_up_sync(kFullMask, static_cast<int>(v), delta) != 0;
  } else if constexpr (std::is_integral_v<T> && sizeof(T) < 4) {
    return static_cast<T>(__shfl_up_sync(kFullMask, static_cast<int>(v), delta));
  } else {
    return __shfl_up_sync(kFullMask, v, delta);
  }
}

// ---- group reductions ---------------------------------------------------------------------------

// Lane 0 of each aligned group of `group` lanes (a power of two <= 32) gets the combination of
// the group's values. Every lane of the warp must call it.
template <class Op, class A>
__device__ inline A group_reduce(const Op& op, A a, int group) {
  for (int d = group / 2; d > 0; d /= 2) a = op.combine(a, shfl_down(a, d));
  return a;
}

// Thread 0 of the block gets the combination of every thread's value (blockDim.x == threads, a
// multiple of 32, <= 1024). smem holds one accumulator per warp. Every thread must call it; it
// ends with a barrier, so smem may be reused right after.
template <class Op, class A>
__device__ inline A block_reduce(const Op& op, A a, A* smem) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int warps = blockDim.x / kWarp;
  a = group_reduce(op, a, kWarp);
  if (lane == 0) smem[warp] = a;
  __syncthreads();
  if (warp == 0) {
    a = lane < warps ? smem[lane] : op.init();
    a = group_reduce(op, a, kWarp);
  }
  __syncthreads();
  return a;
}

}  // namespace ember::cuda_kernels
