// The generic element-wise launcher: out[i] = f(in0[i], in1[i], ...) over operands that share
// one shape (inputs broadcast with stride 0). Included by the .cu files of the element-wise and
// copy families after simt/simt.h; instantiated once per (functor, types).
//
// Two paths:
//  - contiguous: every operand is dense in one merged dim (inputs may be broadcast scalars) and
//    aligned, so each thread moves 16-byte vectors of V elements per operand, grid-stride, with a
//    scalar tail;
//  - strided: any N-d geometry with 32-bit index math, split into pieces where it would not fit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "backend/cuda/elementwise.h"
#include "backend/cuda/kernel_utils.h"

#if defined(__CUDA_ARCH__)
#define EMBER_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)  // the emulated build
#define EMBER_UNROLL _Pragma("GCC unroll 16")
#else
#define EMBER_UNROLL
#endif

namespace ember::cuda_kernels {

// V elements of T loaded or stored as one aligned access (16 bytes for the widest operand).
template <class T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// Elements per vector access: 16 bytes of the widest operand type.
template <class R, class... In>
inline constexpr int kVecElems = [] {
  size_t widest = sizeof(R);
  ((widest = sizeof(In) > widest ? sizeof(In) : widest), ...);
  return static_cast<int>(16 / widest);
}();

// A tiny device-safe tuple of per-operand registers.
template <class... Ts>
struct Regs {};
template <class T, class... Ts>
struct Regs<T, Ts...> {
  T head;
  Regs<Ts...> tail;
};
template <size_t I, class R>
EMBER_HD inline auto& get(R& r) {
  if constexpr (I == 0)
    return r.head;
  else
    return get<I - 1>(r.tail);
}

// The output and input pointers of one launch.
template <class R, int K>
struct Operands {
  R* out;
  const void* in[K > 0 ? K : 1];
};

// Geometry with Idx (uint32_t or int64_t) sizes and strides; operand 0 is the output.
template <class Idx, int N>
struct Geometry {
  int ndim;
  Idx sizes[kMaxDims];
  Idx strides[N][kMaxDims];

  EMBER_HD void offsets(Idx i, Idx (&off)[N]) const {
    EMBER_UNROLL
    for (int k = 0; k < N; ++k) off[k] = 0;
    EMBER_UNROLL
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d >= ndim) continue;
      const Idx c = i % sizes[d];
      i /= sizes[d];
      EMBER_UNROLL
      for (int k = 0; k < N; ++k) off[k] += c * strides[k][d];
    }
  }
};

template <class Idx, int N>
Geometry<Idx, N> geometry_as(const Strided<N>& g) {
  Geometry<Idx, N> r;
  r.ndim = g.ndim;
  for (int d = 0; d < g.ndim; ++d) {
    r.sizes[d] = static_cast<Idx>(g.sizes[d]);
    for (int k = 0; k < N; ++k) r.strides[k][d] = static_cast<Idx>(g.strides[k][d]);
  }
  return r;
}

template <class T, int V>
__device__ inline Vec<T, V> load_vec(const void* p, int64_t v, bool scalar) {
  const T* t = static_cast<const T*>(p);
  Vec<T, V> r;
  if (scalar) {
    const T s = t[0];
    EMBER_UNROLL
    for (int j = 0; j < V; ++j) r.v[j] = s;
  } else {
    r = reinterpret_cast<const Vec<T, V>*>(t)[v];
  }
  return r;
}

template <class T>
__device__ inline T load_one(const void* p, int64_t i, bool scalar) {
  return static_cast<const T*>(p)[scalar ? 0 : i];
}

template <int V, class F, class R, class... In, size_t... I>
__device__ inline void contiguous_body(const F& f, const Operands<R, sizeof...(In)>& p, int64_t n,
                                       unsigned scalar_mask, std::index_sequence<I...>) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / V;
  for (int64_t v = first; v < nvec; v += step) {
    [[maybe_unused]] Regs<Vec<In, V>...> x;
    ((get<I>(x) = load_vec<In, V>(p.in[I], v, (scalar_mask >> I) & 1u)), ...);
    Vec<R, V> o;
    EMBER_UNROLL
    for (int j = 0; j < V; ++j) o.v[j] = f(get<I>(x).v[j]...);
    reinterpret_cast<Vec<R, V>*>(p.out)[v] = o;
  }
  for (int64_t i = nvec * V + first; i < n; i += step) {
    p.out[i] = f(load_one<In>(p.in[I], i, (scalar_mask >> I) & 1u)...);
  }
}

// Every operand dense (stride 1) or, for inputs, a broadcast scalar (bit k of scalar_mask).
template <int V, class F, class R, class... In>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    contiguous_kernel(F f, Operands<R, sizeof...(In)> p, int64_t n, unsigned scalar_mask) {
  contiguous_body<V, F, R, In...>(f, p, n, scalar_mask, std::index_sequence_for<In...>{});
}

template <class Idx, class F, class R, class... In, size_t... I>
__device__ inline void strided_body(const F& f, const Operands<R, sizeof...(In)>& p,
                                    const Geometry<Idx, sizeof...(In) + 1>& g, Idx n,
                                    std::index_sequence<I...>) {
  const Idx step = static_cast<Idx>(gridDim.x) * blockDim.x;
  for (Idx i = static_cast<Idx>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Idx off[sizeof...(In) + 1];
    g.offsets(i, off);
    p.out[off[0]] = f(static_cast<const In*>(p.in[I])[off[I + 1]]...);
  }
}

template <class Idx, class F, class R, class... In>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    strided_kernel(F f, Operands<R, sizeof...(In)> p, Geometry<Idx, sizeof...(In) + 1> g, Idx n) {
  strided_body<Idx, F, R, In...>(f, p, g, n, std::index_sequence_for<In...>{});
}

// Blocks for n elements at per_thread elements per thread, within the launcher's grid limit.
inline unsigned ew_grid(int64_t n, int per_thread) {
  const int64_t limit = elementwise_grid_limit();
  return grid_for(n, kBlock, per_thread, limit > 0 ? limit : kMaxBlocks);
}

// Whether the merged geometry is one dense run: output stride 1, inputs stride 1 or 0.
template <int N>
bool dense_run(const Strided<N>& g, unsigned& scalar_mask) {
  scalar_mask = 0;
  if (g.ndim == 0) {  // a single element
    scalar_mask = (1u << (N - 1)) - 1u;
    return true;
  }
  if (g.ndim != 1 || g.strides[0][0] != 1) return false;
  for (int k = 1; k < N; ++k) {
    if (g.strides[k][0] == 0)
      scalar_mask |= 1u << (k - 1);
    else if (g.strides[k][0] != 1)
      return false;
  }
  return true;
}

// Whether every offset of the geometry (and the element count) fits in 31 bits. Strides are never
// negative in ember.
template <int N>
bool fits_32bit(const Strided<N>& g, int64_t n) {
  constexpr int64_t kMax = INT32_MAX;
  if (n > kMax) return false;
  for (int k = 0; k < N; ++k) {
    int64_t last = 0;
    for (int d = 0; d < g.ndim; ++d) {
      if (g.strides[k][d] < 0) return false;
      last += (g.sizes[d] - 1) * g.strides[k][d];
    }
    if (last > kMax) return false;
  }
  return true;
}

// The strided kernel over pieces whose element count and offsets fit 32-bit index math: a larger
// geometry is halved along its outermost dim (PyTorch splits its iterators the same way), so no
// kernel needs 64-bit divisions.
template <class R, class... In, class F>
void launch_strided(const F& f, const Strided<sizeof...(In) + 1>& g, int64_t n, cudaStream_t stream,
                    Operands<R, sizeof...(In)> p) {
  constexpr int N = sizeof...(In) + 1;
  if (fits_32bit(g, n)) {
    simt::launch(strided_kernel<uint32_t, F, R, In...>, ew_grid(n, 1), dim3(kBlock), 0, stream, f,
                 p, geometry_as<uint32_t>(g), static_cast<uint32_t>(n));
    return;
  }
  constexpr size_t bytes[N] = {sizeof(R), sizeof(In)...};
  Strided<N> piece = g;
  if (g.sizes[0] == 1) {  // drop an exhausted outer dim
    piece.ndim = g.ndim - 1;
    for (int d = 0; d < piece.ndim; ++d) {
      piece.sizes[d] = g.sizes[d + 1];
      for (int k = 0; k < N; ++k) piece.strides[k][d] = g.strides[k][d + 1];
    }
    launch_strided<R, In...>(f, piece, n, stream, p);
    return;
  }
  const int64_t inner = n / g.sizes[0];
  const int64_t half = g.sizes[0] / 2;
  piece.sizes[0] = half;
  launch_strided<R, In...>(f, piece, half * inner, stream, p);
  piece.sizes[0] = g.sizes[0] - half;
  p.out = reinterpret_cast<R*>(reinterpret_cast<char*>(p.out) + half * g.strides[0][0] * bytes[0]);
  for (int k = 1; k < N; ++k) {
    p.in[k - 1] = static_cast<const char*>(p.in[k - 1]) + half * g.strides[k][0] * bytes[k];
  }
  launch_strided<R, In...>(f, piece, piece.sizes[0] * inner, stream, p);
}

// out = f(in...) element-wise over geometry g (operand 0: out, then the inputs), n elements.
template <class R, class... In, class F>
cudaError_t launch_elementwise(const F& f, const Strided<sizeof...(In) + 1>& g, int64_t n,
                               cudaStream_t stream, void* out, const void* const* in) {
  constexpr int K = sizeof...(In);
  if (n <= 0) return cudaSuccess;
  Operands<R, K> p{};
  p.out = static_cast<R*>(out);
  for (int k = 0; k < K; ++k) p.in[k] = in[k];
  unsigned scalar_mask = 0;
  if (dense_run(g, scalar_mask)) {
    constexpr int V = kVecElems<R, In...>;
    bool aligned = reinterpret_cast<uintptr_t>(out) % sizeof(Vec<R, V>) == 0;
    const size_t vec_bytes[K > 0 ? K : 1] = {sizeof(Vec<In, V>)...};
    for (int k = 0; k < K; ++k) {
      if (!((scalar_mask >> k) & 1u)) {
        aligned &= reinterpret_cast<uintptr_t>(in[k]) % vec_bytes[k] == 0;
      }
    }
    if (aligned) {
      simt::launch(contiguous_kernel<V, F, R, In...>, ew_grid(n, V), dim3(kBlock), 0, stream, f, p,
                   n, scalar_mask);
      return cudaGetLastError();
    }
  }
  launch_strided<R, In...>(f, g, n, stream, p);
  return cudaGetLastError();
}

}  // namespace ember::cuda_kernels
