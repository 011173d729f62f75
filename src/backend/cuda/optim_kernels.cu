// Fused optimizer updates over a list of tensors: every block walks chunks of the table (grid-
// stride), reads its tensor's slot pointers and step scalars and applies the shared functor of
// kernels/optim_ops.h, 4 elements per thread and iteration with vector loads where aligned.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include <atomic>

#include "backend/cuda/kernel_utils.h"
#include "backend/cuda/optim_kernels.h"
#include "core/dispatch.h"
#include "ember/half.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

std::atomic<int64_t> g_launches{0};

constexpr int kVec = 4;

template <class T>
struct alignas(sizeof(T) * kVec) Pack {
  T v[kVec];
};

template <class F, class T>
__device__ inline void update_one(const F& f, T* const (&ptr)[kOptimSlots], int mask, int64_t j) {
  using C = compute_t<T>;
  C p = cast<C>(ptr[0][j]);
  C a = (mask & 1) ? cast<C>(ptr[2][j]) : C(0);
  C b = (mask & 2) ? cast<C>(ptr[3][j]) : C(0);
  C c = (mask & 4) ? cast<C>(ptr[4][j]) : C(0);
  f(p, cast<C>(ptr[1][j]), a, b, c);
  ptr[0][j] = cast<T>(p);
  if (mask & 1) ptr[2][j] = cast<T>(a);
  if (mask & 2) ptr[3][j] = cast<T>(b);
  if (mask & 4) ptr[4][j] = cast<T>(c);
}

// Loads 4 elements of every used slot at j (aligned), updates them in registers, stores them.
template <class F, class T>
__device__ inline void update_pack(const F& f, T* const (&ptr)[kOptimSlots], int mask, int64_t j) {
  using C = compute_t<T>;
  Pack<T> r[kOptimSlots];
  r[0] = *reinterpret_cast<const Pack<T>*>(ptr[0] + j);
  r[1] = *reinterpret_cast<const Pack<T>*>(ptr[1] + j);
  for (int k = 2; k < kOptimSlots; ++k) {
    if (mask & (1 << (k - 2))) r[k] = *reinterpret_cast<const Pack<T>*>(ptr[k] + j);
  }
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int e = 0; e < kVec; ++e) {
    C p = cast<C>(r[0].v[e]);
    C a = (mask & 1) ? cast<C>(r[2].v[e]) : C(0);
    C b = (mask & 2) ? cast<C>(r[3].v[e]) : C(0);
    C c = (mask & 4) ? cast<C>(r[4].v[e]) : C(0);
    f(p, cast<C>(r[1].v[e]), a, b, c);
    r[0].v[e] = cast<T>(p);
    r[2].v[e] = cast<T>(a);
    r[3].v[e] = cast<T>(b);
    r[4].v[e] = cast<T>(c);
  }
  *reinterpret_cast<Pack<T>*>(ptr[0] + j) = r[0];
  for (int k = 2; k < kOptimSlots; ++k) {
    if (mask & (1 << (k - 2))) *reinterpret_cast<Pack<T>*>(ptr[k] + j) = r[k];
  }
}

template <class Tag, class T>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSmOf<T>)
    optim_kernel(OptimHyper h, int mask, const int64_t* table, int ntensors, int64_t nchunks) {
  using C = compute_t<T>;
  using F = typename Tag::template type<C>;
  const int64_t* chunks = table + static_cast<int64_t>(ntensors) * kOptimTensorWords;
  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
    const int64_t t = chunks[2 * c];
    const int64_t start = chunks[2 * c + 1];
    const int64_t* e = table + t * kOptimTensorWords;
    T* ptr[kOptimSlots];
    for (int k = 0; k < kOptimSlots; ++k) ptr[k] = reinterpret_cast<T*>(e[k]);
    const int64_t n = e[kOptimSlots];
    OptimTensorScalars s;
    s.a = detail::bits_double(static_cast<uint64_t>(e[kOptimSlots + 1]));
    s.b = detail::bits_double(static_cast<uint64_t>(e[kOptimSlots + 2]));
    const int64_t flags = e[kOptimSlots + 3];
    s.first = (flags & kOptimFlagFirst) != 0;
    const F f(h, s);
    const int64_t end = start + kOptimChunk < n ? start + kOptimChunk : n;
    int64_t j = start;
    if (flags & kOptimFlagAligned) {
      const int64_t vec_end = start + (end - start) / kVec * kVec;
      for (int64_t v = start + static_cast<int64_t>(threadIdx.x) * kVec; v < vec_end;
           v += static_cast<int64_t>(blockDim.x) * kVec) {
        update_pack(f, ptr, mask, v);
      }
      j = vec_end;
    }
    for (int64_t i = j + threadIdx.x; i < end; i += blockDim.x) update_one(f, ptr, mask, i);
  }
}

}  // namespace

cudaError_t optim_multi_tensor(OptimOp op, DType dtype, const OptimHyper& h, const int64_t* table,
                               int ntensors, int64_t nchunks, cudaStream_t stream) {
  if (nchunks <= 0) return cudaSuccess;
  const int mask = optim_slot_mask(op, h);
  return visit_float_dtype(dtype, "optimizer step", [&](auto type_tag) {
    using T = typename decltype(type_tag)::type;
    return visit_optim_op(op, [&](auto op_tag) {
      using Tag = decltype(op_tag);
      const unsigned grid = static_cast<unsigned>(nchunks < kMaxBlocks ? nchunks : kMaxBlocks);
      simt::launch(optim_kernel<Tag, T>, dim3(grid), dim3(kBlock), 0, stream, h, mask, table,
                   ntensors, nchunks);
      g_launches.fetch_add(1, std::memory_order_relaxed);
      return cudaGetLastError();
    });
  });
}

int64_t optim_launch_count() { return g_launches.load(std::memory_order_relaxed); }

}  // namespace ember::cuda_kernels
