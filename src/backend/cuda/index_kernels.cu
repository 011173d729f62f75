// Indexing kernels: gather-style reads (index_select, gather, index), scatter-style writes
// (scatter, scatter_add, index_put) with atomic accumulation, and nonzero. Every index is checked
// on the device; an out-of-range one is skipped and recorded for the host to raise.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstring>
#include <type_traits>

#include "backend/cuda/index_kernels.h"
#include "core/dispatch.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

__device__ inline void record_fault(IndexFault* fault, int slot, int64_t value, int64_t size) {
  if (atomicCAS(&fault->hit, 0ull, 1ull) == 0ull) {
    fault->slot = slot;
    fault->value = value;
    fault->size = size;
  }
}

// rel = sum_j idx_j[pos] * stride_j; false (and the fault recorded) when an index is out of range.
__device__ inline bool indexed_offset(const IndexArgs& a, int64_t pos, IndexFault* fault,
                                      int64_t& rel) {
  rel = 0;
  for (int j = 0; j < a.k; ++j) {
    const int64_t given = (a.int32_mask >> j) & 1u
                              ? static_cast<int64_t>(static_cast<const int32_t*>(a.ptr[j])[pos])
                              : static_cast<const int64_t*>(a.ptr[j])[pos];
    int64_t v = given;
    if (a.wrap && v < 0) v += a.size[j];
    if (v < 0 || v >= a.size[j]) {
      record_fault(fault, j, given, a.size[j]);
      return false;
    }
    rel += v * a.stride[j];
  }
  return true;
}

template <class E>
__global__ void gather_kernel(E* out, const E* in, int64_t n, Strided<3> g, IndexArgs a,
                              IndexFault* fault) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3], rel;
    g.offsets(i, off);
    if (indexed_offset(a, off[2], fault, rel)) out[off[0]] = in[off[1] + rel];
  }
}

// a + b in T's compute type, rounded once; "or" for bool (as the CPU backend accumulates).
template <class T>
__device__ inline T add_values(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    using C = compute_t<T>;
    return cast<T>(static_cast<C>(a) + static_cast<C>(b));
  }
}

// *addr += v atomically: the hardware add for 32/64-bit types, otherwise a CAS loop on the
// aligned 32-bit word that holds the element (allocations are 512-byte aligned, so the word is
// inside the allocation).
template <class T>
__device__ inline void atomic_accumulate(T* addr, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                std::is_same_v<T, int32_t>) {
    atomicAdd(addr, v);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(addr), static_cast<unsigned long long>(v));
  } else {
    static_assert(sizeof(T) <= 2, "sub-word types only");
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    unsigned int* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t(3));
    const unsigned int shift = static_cast<unsigned int>(a & 3) * 8;
    const unsigned int mask = ((1u << (8 * sizeof(T))) - 1u) << shift;
    unsigned int old = *reinterpret_cast<volatile unsigned int*>(word), assumed;
    do {
      assumed = old;
      const unsigned int cur_bits = (assumed & mask) >> shift;
      T cur;
      memcpy(static_cast<void*>(&cur), &cur_bits, sizeof(T));
      const T next = add_values(cur, v);
      unsigned int next_bits = 0;
      memcpy(&next_bits, &next, sizeof(T));
      old = atomicCAS(word, assumed, (assumed & ~mask) | (next_bits << shift));
    } while (old != assumed);
  }
}

template <class T, bool kAccumulate>
__global__ void scatter_kernel(T* out, const T* src, int64_t n, Strided<3> g, IndexArgs a,
                               IndexFault* fault) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[3], rel;
    g.offsets(i, off);
    if (!indexed_offset(a, off[2], fault, rel)) continue;
    if constexpr (kAccumulate) {
      atomic_accumulate(out + off[0] + rel, src[off[1]]);
    } else {
      out[off[0] + rel] = src[off[1]];
    }
  }
}

// ---- nonzero ------------------------------------------------------------------------------------

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kMaxScanBlocks = 1024;  // one scan block covers every chunk count

// The sum of v over the block, valid in thread 0. blockDim.x is a multiple of 32.
__device__ inline long long block_sum(long long v) {
  __shared__ long long warp_sums[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFullMask, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x >> 5) ? warp_sums[lane] : 0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFullMask, v, o);
  }
  return v;
}

template <class T>
__global__ void nonzero_count_kernel(const T* in, int64_t n, int64_t chunk, int64_t* counts) {
  const int64_t start = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t end = start + chunk < n ? start + chunk : n;
  long long c = 0;
  for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) c += cast<bool>(in[i]) ? 1 : 0;
  c = block_sum(c);
  if (threadIdx.x == 0) counts[blockIdx.x] = c;
}

// counts[0..blocks) becomes its exclusive prefix sum and counts[blocks] the total; one block of
// blockDim.x >= blocks threads (a multiple of 32).
__global__ void exclusive_scan_kernel(int64_t* counts, int blocks) {
  __shared__ long long warp_totals[32];
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const long long v = t < blocks ? counts[t] : 0;
  long long x = v;  // inclusive scan inside the warp
  for (int o = 1; o < 32; o <<= 1) {
    const long long y = __shfl_up_sync(kFullMask, x, o);
    if (lane >= o) x += y;
  }
  if (lane == 31) warp_totals[warp] = x;
  __syncthreads();
  if (warp == 0) {
    const int nwarps = static_cast<int>(blockDim.x >> 5);
    long long w = lane < nwarps ? warp_totals[lane] : 0;
    for (int o = 1; o < 32; o <<= 1) {
      const long long y = __shfl_up_sync(kFullMask, w, o);
      if (lane >= o) w += y;
    }
    if (lane < nwarps) warp_totals[lane] = w;
  }
  __syncthreads();
  const long long before = (warp > 0 ? warp_totals[warp - 1] : 0) + x - v;
  if (t < blocks) counts[t] = before;
  if (t == static_cast<int>(blockDim.x) - 1) counts[blocks] = before + v;
}

struct Dims {
  int nd;
  int64_t sizes[kMaxDims];
};

// Each block walks its chunk a tile of blockDim.x elements at a time; a ballot per warp and the
// warp totals give every non-zero element its rank, so the output stays in row-major order.
template <class T>
__global__ void nonzero_write_kernel(const T* in, int64_t n, int64_t chunk, const int64_t* counts,
                                     Dims dims, int64_t* out) {
  __shared__ int warp_totals[32];
  const int64_t start = static_cast<int64_t>(blockIdx.x) * chunk;
  const int64_t end = start + chunk < n ? start + chunk : n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nwarps = static_cast<int>(blockDim.x >> 5);
  int64_t base = counts[blockIdx.x];
  for (int64_t t0 = start; t0 < end; t0 += blockDim.x) {
    const int64_t i = t0 + threadIdx.x;
    const bool nz = i < end && cast<bool>(in[i]);
    const unsigned ballot = __ballot_sync(kFullMask, nz);
    if (lane == 0) warp_totals[warp] = __popc(ballot);
    __syncthreads();
    int before = __popc(ballot & ((1u << lane) - 1u)), total = 0;
    for (int w = 0; w < nwarps; ++w) {
      const int c = warp_totals[w];
      if (w < warp) before += c;
      total += c;
    }
    if (nz) {
      int64_t* row = out + (base + before) * dims.nd;
      int64_t rem = i;
      for (int d = dims.nd - 1; d >= 0; --d) {
        row[d] = rem % dims.sizes[d];
        rem /= dims.sizes[d];
      }
    }
    base += total;
    __syncthreads();  // warp_totals is rewritten by the next tile
  }
}

int64_t nonzero_chunk(int64_t n, int blocks) { return (n + blocks - 1) / blocks; }

// Calls fn(TypeTag<U>) with the unsigned type of elem_size bytes: data movement needs no dtype.
template <class Fn>
cudaError_t by_size(int elem_size, Fn&& fn) {
  switch (elem_size) {
    case 1:
      return fn(TypeTag<uint8_t>{});
    case 2:
      return fn(TypeTag<uint16_t>{});
    case 4:
      return fn(TypeTag<uint32_t>{});
    case 8:
      return fn(TypeTag<uint64_t>{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace

cudaError_t index_gather(void* out, const void* in, int elem_size, int64_t n,
                         const Strided<3>& geom, const IndexArgs& idx, IndexFault* fault,
                         cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  return by_size(elem_size, [&](auto tag) {
    using E = typename decltype(tag)::type;
    simt::launch(gather_kernel<E>, grid_for(n), dim3(kBlock), 0, stream, static_cast<E*>(out),
                 static_cast<const E*>(in), n, geom, idx, fault);
    return cudaGetLastError();
  });
}

cudaError_t index_scatter(void* out, const void* src, DType dtype, bool accumulate, int64_t n,
                          const Strided<3>& geom, const IndexArgs& idx, IndexFault* fault,
                          cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  if (!accumulate) {
    return by_size(static_cast<int>(element_size(dtype)), [&](auto tag) {
      using E = typename decltype(tag)::type;
      simt::launch(scatter_kernel<E, false>, grid_for(n), dim3(kBlock), 0, stream,
                   static_cast<E*>(out), static_cast<const E*>(src), n, geom, idx, fault);
      return cudaGetLastError();
    });
  }
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(scatter_kernel<T, true>, grid_for(n), dim3(kBlock), 0, stream,
                 static_cast<T*>(out), static_cast<const T*>(src), n, geom, idx, fault);
    return cudaGetLastError();
  });
}

int nonzero_blocks(int64_t n) { return static_cast<int>(grid_for(n, kBlock, 4, kMaxScanBlocks)); }

cudaError_t nonzero_count(const void* in, DType dtype, int64_t n, int blocks, int64_t* counts,
                          cudaStream_t stream) {
  const int64_t chunk = nonzero_chunk(n, blocks);
  cudaError_t err = visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(nonzero_count_kernel<T>, dim3(blocks), dim3(kBlock), 0, stream,
                 static_cast<const T*>(in), n, chunk, counts);
    return cudaGetLastError();
  });
  if (err != cudaSuccess) return err;
  const int threads = (blocks + 31) / 32 * 32;
  simt::launch(exclusive_scan_kernel, dim3(1), dim3(threads), 0, stream, counts, blocks);
  return cudaGetLastError();
}

cudaError_t nonzero_write(const void* in, DType dtype, int64_t n, int blocks, const int64_t* counts,
                          int ndim, const int64_t* sizes, int64_t* out, cudaStream_t stream) {
  if (ndim > kMaxDims) return cudaErrorInvalidValue;
  Dims dims{};
  dims.nd = ndim;
  for (int d = 0; d < ndim; ++d) dims.sizes[d] = sizes[d];
  const int64_t chunk = nonzero_chunk(n, blocks);
  return visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    simt::launch(nonzero_write_kernel<T>, dim3(blocks), dim3(kBlock), 0, stream,
                 static_cast<const T*>(in), n, chunk, counts, dims, out);
    return cudaGetLastError();
  });
}

}  // namespace ember::cuda_kernels
