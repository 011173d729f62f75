// Fused softmax cross-entropy and nll on the device. Forward: a group of lanes (up to a warp) or a
// whole block per row folds an online log-sum-exp (and the weighted row sum for label smoothing)
// in one read of the row, combined by warp shuffles; lane 0 writes the row's loss. Backward: the
// same row mapping writes every element of the gradient once from the row's saved log-sum-exp.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <limits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/loss_kernels.h"
#include "core/dispatch.h"
#include "kernels/cast.h"
#include "kernels/reduce_ops.h"

namespace ember::cuda_kernels {

namespace {

constexpr int kThreads = 256;
// Rows longer than this get a block each; shorter rows share a warp between 32 / group rows.
constexpr int64_t kBlockRow = 1024;

// (max, sum of exp(x - max)) and sum_c w_c x_c of a row.
template <class A>
struct CeAcc {
  rd::LseAcc<A> lse;
  A wx;
};

template <class A>
__device__ inline CeAcc<A> shfl_down(CeAcc<A> v, int delta) {
  return {cuda_kernels::shfl_down(v.lse, delta), cuda_kernels::shfl_down(v.wx, delta)};
}

template <class A>
struct CeOp {
  rd::LogSumExpOp<A, A> lse;
  __device__ CeAcc<A> init() const { return {lse.init(), A(0)}; }
  __device__ CeAcc<A> combine(CeAcc<A> a, CeAcc<A> b) const {
    return {lse.combine(a.lse, b.lse), a.wx + b.wx};
  }
};

__device__ inline void record_fault(LossFault* fault, int64_t value) {
  if (atomicCAS(&fault->hit, 0ull, 1ull) == 0ull) fault->value = value;
}

// Threads per row: a power of two up to a warp for short rows, the whole block for long ones.
inline int threads_per_row(int64_t classes) {
  if (classes > kBlockRow) return kThreads;
  int g = 1;
  while (g < kWarp && g < classes) g *= 2;
  return g;
}

// blockDim (tpr, kThreads / tpr): threadIdx.y picks the row of the block, threadIdx.x strides
// over its classes (adjacent lanes read adjacent elements).
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSmOf<T>)
    cross_entropy_kernel(CrossEntropyArgs a, compute_t<T>* loss, compute_t<T>* row_w,
                         compute_t<T>* lse_out, LossFault* fault) {
  using A = compute_t<T>;
  const CeOp<A> op;
  __shared__ CeAcc<A> smem[kThreads / kWarp];
  const T* in = static_cast<const T*>(a.input);
  const T* w = static_cast<const T*>(a.weight);
  const A eps = static_cast<A>(a.label_smoothing);
  const int64_t c = a.classes;
  const int tpr = blockDim.x;
  for (int64_t base = blockIdx.x * static_cast<int64_t>(blockDim.y); base < a.rows;
       base += gridDim.x * static_cast<int64_t>(blockDim.y)) {
    const int64_t row = base + threadIdx.y;
    const int64_t t = row < a.rows ? a.target[row] : a.ignore_index;
    const bool valid = t != a.ignore_index && t >= 0 && t < c;
    const T* x = in + (valid ? row * c : 0);
    CeAcc<A> acc = op.init();
    if (valid) {
      for (int64_t j = threadIdx.x; j < c; j += tpr) {
        const A v = static_cast<A>(x[j]);
        acc.lse = op.lse.reduce(acc.lse, v);
        if (eps != A(0)) acc.wx += (w ? static_cast<A>(w[j]) : A(1)) * v;
      }
    }
    if (tpr > kWarp)
      acc = block_reduce(op, acc, smem);
    else
      acc = group_reduce(op, acc, tpr);
    if (threadIdx.x != 0 || row >= a.rows) continue;
    if (!valid) {
      if (t != a.ignore_index) record_fault(fault, t);
      loss[row] = A(0);
      row_w[row] = A(0);
      lse_out[row] = A(0);
      continue;
    }
    const A wt = w ? static_cast<A>(w[t]) : A(1);
    const A wsum = a.weight_sum ? *static_cast<const A*>(a.weight_sum) : static_cast<A>(c);
    // An infinite maximum makes the row NaN, as log_softmax does.
    const A l = acc.lse.max == std::numeric_limits<A>::infinity()
                    ? std::numeric_limits<A>::quiet_NaN()
                    : acc.lse.max + static_cast<A>(std::log(acc.lse.sum));
    A r = (A(1) - eps) * wt * (l - static_cast<A>(x[t]));
    if (eps != A(0)) r += eps / static_cast<A>(c) * (wsum * l - acc.wx);
    loss[row] = r;
    row_w[row] = wt;
    lse_out[row] = l;
  }
}

// nll of log-probabilities: a thread per row reads one element.
template <class T>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSmOf<T>)
    nll_kernel(CrossEntropyArgs a, compute_t<T>* loss, compute_t<T>* row_w, compute_t<T>* lse_out,
               LossFault* fault) {
  using A = compute_t<T>;
  const T* in = static_cast<const T*>(a.input);
  const T* w = static_cast<const T*>(a.weight);
  for (int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; row < a.rows;
       row += gridDim.x * static_cast<int64_t>(blockDim.x)) {
    const int64_t t = a.target[row];
    A r = A(0), wt = A(0);
    if (t != a.ignore_index) {
      if (t < 0 || t >= a.classes) {
        record_fault(fault, t);
      } else {
        wt = w ? static_cast<A>(w[t]) : A(1);
        r = -wt * static_cast<A>(in[row * a.classes + t]);
      }
    }
    loss[row] = r;
    row_w[row] = wt;
    lse_out[row] = A(0);
  }
}

// d loss_i / d x_ij * g_i = g_i ((1 - e) w_t (p_ij - [j = t]) + e / C (W p_ij - w_j)), or
// -g_i w_t [j = t] for log-probabilities; ignored rows get zeros.
template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSmOf<T>)
    cross_entropy_backward_kernel(CrossEntropyArgs a, T* gx, const compute_t<T>* g,
                                  int64_t g_stride, const compute_t<T>* lse) {
  using A = compute_t<T>;
  const T* in = static_cast<const T*>(a.input);
  const T* w = static_cast<const T*>(a.weight);
  const A eps = static_cast<A>(a.label_smoothing);
  const int64_t c = a.classes;
  const A wsum = a.weight_sum ? *static_cast<const A*>(a.weight_sum) : static_cast<A>(c);
  const int tpr = blockDim.x;
  for (int64_t base = blockIdx.x * static_cast<int64_t>(blockDim.y); base < a.rows;
       base += gridDim.x * static_cast<int64_t>(blockDim.y)) {
    const int64_t row = base + threadIdx.y;
    if (row >= a.rows) continue;
    const int64_t t = a.target[row];
    const T* x = in + row * c;
    T* y = gx + row * c;
    if (t == a.ignore_index || t < 0 || t >= c) {
      for (int64_t j = threadIdx.x; j < c; j += tpr) y[j] = cast<T>(A(0));
      continue;
    }
    const A gi = g[row * g_stride];
    const A wt = w ? static_cast<A>(w[t]) : A(1);
    if (!a.from_logits) {
      for (int64_t j = threadIdx.x; j < c; j += tpr) y[j] = cast<T>(j == t ? -gi * wt : A(0));
      continue;
    }
    const A l = lse[row];
    const A k1 = gi * ((A(1) - eps) * wt + eps / static_cast<A>(c) * wsum);
    const A k2 = gi * eps / static_cast<A>(c);
    const A kt = gi * (A(1) - eps) * wt;
    for (int64_t j = threadIdx.x; j < c; j += tpr) {
      const A p = rd::softmax_exp<A>(static_cast<A>(x[j]) - l);
      A v = k1 * p;
      if (eps != A(0)) v -= k2 * (w ? static_cast<A>(w[j]) : A(1));
      if (j == t) v -= kt;
      y[j] = cast<T>(v);
    }
  }
}

dim3 row_block(int64_t classes) {
  const int tpr = threads_per_row(classes);
  return dim3(tpr, kThreads / tpr);
}

}  // namespace

cudaError_t cross_entropy_forward(DType dtype, const CrossEntropyArgs& a, void* loss,
                                  void* row_weight, void* lse, LossFault* fault,
                                  cudaStream_t stream) {
  return visit_float_dtype(dtype, "cross_entropy", [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    A* l = static_cast<A*>(loss);
    A* rw = static_cast<A*>(row_weight);
    A* s = static_cast<A*>(lse);
    if (!a.from_logits) {
      simt::launch(nll_kernel<T>, dim3(grid_for(a.rows)), dim3(kBlock), 0, stream, a, l, rw, s,
                   fault);
    } else {
      const dim3 block = row_block(a.classes);
      simt::launch(cross_entropy_kernel<T>, dim3(grid_for(a.rows, block.y)), block, 0, stream, a, l,
                   rw, s, fault);
    }
    return cudaGetLastError();
  });
}

cudaError_t cross_entropy_backward(DType dtype, const CrossEntropyArgs& a, void* grad_input,
                                   const void* grad_rows, int64_t grad_stride, const void* lse,
                                   cudaStream_t stream) {
  return visit_float_dtype(dtype, "cross_entropy", [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    using A = compute_t<T>;
    const dim3 block = row_block(a.classes);
    simt::launch(cross_entropy_backward_kernel<T>, dim3(grid_for(a.rows, block.y)), block, 0,
                 stream, a, static_cast<T*>(grad_input), static_cast<const A*>(grad_rows),
                 grad_stride, static_cast<const A*>(lse));
    return cudaGetLastError();
  });
}

}  // namespace ember::cuda_kernels
