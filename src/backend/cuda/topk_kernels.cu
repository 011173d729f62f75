// topk by radix selection. A block per row finds the k-th largest order key of the row digit by
// digit, from the top (8-bit digits, a 256-bin histogram in shared memory per pass), then writes
// the selected elements (every key above the k-th, and the first ties of it in index order) to a
// scratch row in index order. sort_rows then orders the k selected, and their positions in the
// scratch row are mapped back to indices in the input row. Order keys put NaN above every number
// and -0 level with +0, so the result is the CPU backend's, ties by index included.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/index_kernels.h"
#include "core/dispatch.h"

namespace ember::cuda_kernels {

namespace {

constexpr int kDigitBits = 8;
constexpr int kBins = 1 << kDigitBits;
constexpr int kSelectThreads = kBins;    // one histogram bin per thread
constexpr int64_t kSelectMinRow = 1024;  // shorter rows: one block sorts them in shared memory

template <size_t Bytes>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOf<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOf<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOf<8> {
  using type = unsigned long long;
};

template <class T>
using Key = typename UnsignedOf<sizeof(T)>::type;

// An unsigned key whose order is the value order: the sign bit flipped for signed integers, for
// floats the sign bit set on positives and every bit flipped on negatives; every NaN gets the
// largest key and -0 gets +0's.
template <class T>
__device__ inline Key<T> order_key(T x) {
  using U = Key<T>;
  constexpr U top = static_cast<U>(U(1) << (8 * sizeof(U) - 1));
  if constexpr (std::is_same_v<T, bool>) {
    return static_cast<U>(x ? 1 : 0);
  } else if constexpr (is_float_type_v<T>) {
    const compute_t<T> f = static_cast<compute_t<T>>(x);
    if (f != f) return static_cast<U>(~U(0));
    if (f == 0) return top;
    U b;
    memcpy(&b, &x, sizeof b);
    return (b & top) ? static_cast<U>(~b) : static_cast<U>(b | top);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<U>(static_cast<U>(x) ^ top);
  } else {
    return static_cast<U>(x);
  }
}

// Inclusive sum of v over the block's threads in thread order; total gets the block's sum.
// blockDim.x is a multiple of 32 and sums has a word per warp. Every thread must call it; it ends
// with a barrier, so sums may be reused right after.
__device__ inline unsigned block_inclusive_sum(unsigned v, unsigned* sums, unsigned& total) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int d = 1; d < kWarp; d *= 2) {
    const unsigned u = __shfl_up_sync(kFullMask, v, d);
    if (lane >= d) v += u;
  }
  if (lane == kWarp - 1) sums[warp] = v;
  __syncthreads();
  total = 0;
  for (int w = 0; w < static_cast<int>(blockDim.x) / kWarp; ++w) {
    if (w < warp) v += sums[w];
    total += sums[w];
  }
  __syncthreads();
  return v;
}

// A block of kSelectThreads per row (blockIdx-strided). Selection keys are the order keys, or
// their complements for the smallest; the k-th largest selection key is found a digit per pass
// among the keys that share its digits found so far. sel_vals/sel_idx (rows x k) get each row's
// selected values and their indices along the row, in index order.
template <class T>
__global__ void __launch_bounds__(kSelectThreads)
    radix_select_kernel(const T* in, SortRows r, bool largest, T* sel_vals, int64_t* sel_idx) {
  using U = Key<T>;
  constexpr int kKeyBits = 8 * sizeof(U);
  __shared__ unsigned hist[kBins];
  __shared__ unsigned sums[kSelectThreads / kWarp];
  __shared__ unsigned found[2];  // the pass's digit, and the k-th key's rank inside it
  const U flip = largest ? U(0) : static_cast<U>(~U(0));
  const unsigned n = static_cast<unsigned>(r.n), k = static_cast<unsigned>(r.keep);
  for (int64_t row = blockIdx.x; row < r.rows; row += gridDim.x) {
    int64_t off[3];
    r.geom.offsets(row, off);
    const T* x = in + off[0];
    auto select_key = [&](T v) { return static_cast<U>(order_key(v) ^ flip); };

    // (n) -> the k-th largest selection key: prefix; rank: how many keys equal to it to take.
    U prefix = 0, known = 0;
    unsigned rank = k;
    for (int shift = kKeyBits - kDigitBits; shift >= 0; shift -= kDigitBits) {
      hist[threadIdx.x] = 0;
      __syncthreads();
      for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
        const U key = select_key(x[static_cast<int64_t>(i) * r.in_stride]);
        if ((key & known) == prefix) atomicAdd(&hist[(key >> shift) & (kBins - 1)], 1u);
      }
      __syncthreads();
      // Thread t takes digit kBins - 1 - t: its inclusive sum counts the keys at or above it.
      const unsigned digit = kBins - 1 - threadIdx.x;
      const unsigned count = hist[digit];
      unsigned total;
      const unsigned at_or_above = block_inclusive_sum(count, sums, total);
      if (at_or_above >= rank && at_or_above - count < rank) {
        found[0] = digit;
        found[1] = rank - (at_or_above - count);
      }
      __syncthreads();
      prefix = static_cast<U>(prefix | static_cast<U>(static_cast<U>(found[0]) << shift));
      known = static_cast<U>(known | static_cast<U>(static_cast<U>(kBins - 1) << shift));
      rank = found[1];
    }

    // (n) -> (k): tiles of blockDim.x elements in index order; one scan counts the keys above
    // the k-th (low half) and equal to it (high half) before each element.
    T* out_val = sel_vals + row * r.keep;
    int64_t* out_idx = sel_idx + row * r.keep;
    unsigned taken = 0, ties_left = rank;
    for (unsigned base = 0; base < n && taken < k; base += blockDim.x) {
      const unsigned i = base + threadIdx.x;
      T v{};
      bool above = false, equal = false;
      if (i < n) {
        v = x[static_cast<int64_t>(i) * r.in_stride];
        const U key = select_key(v);
        above = key > prefix;
        equal = key == prefix;
      }
      const unsigned flags = (above ? 1u : 0u) | (equal ? 1u << 16 : 0u);
      unsigned total;
      const unsigned before = block_inclusive_sum(flags, sums, total) - flags;
      const unsigned above_before = before & 0xffffu, equal_before = before >> 16;
      if (above || (equal && equal_before < ties_left)) {
        const unsigned pos = taken + above_before + min(equal_before, ties_left);
        out_val[pos] = v;
        out_idx[pos] = i;
      }
      const unsigned ties = min(total >> 16, ties_left);
      taken += (total & 0xffffu) + ties;
      ties_left -= ties;
    }
  }
}

// indices (k per row, through the output geometry) hold positions in the selected rows; each
// becomes the element's index along the input row.
__global__ void __launch_bounds__(kBlock)
    topk_indices_kernel(int64_t* indices, const int64_t* sel_idx, SortRows r) {
  const int64_t total = r.rows * r.keep;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t row = e / r.keep, p = e - row * r.keep;
    int64_t off[3];
    r.geom.offsets(row, off);
    int64_t& dst = indices[off[2] + p * r.i_stride];
    dst = sel_idx[row * r.keep + dst];
  }
}

}  // namespace

bool topk_selects(int64_t n, int64_t k) {
  return n >= kSelectMinRow && n <= INT32_MAX && 2 * k <= n;
}

size_t topk_scratch_bytes(DType dtype, int64_t rows, int64_t k) {
  const size_t sel = static_cast<size_t>(rows * k);
  return sel * sizeof(int64_t) + sort_scratch_bytes(dtype, rows, k) + sel * element_size(dtype);
}

cudaError_t topk_rows(void* values, int64_t* indices, const void* in, DType dtype,
                      const SortRows& r, bool largest, void* scratch, cudaStream_t stream) {
  if (r.rows <= 0 || r.keep <= 0) return cudaSuccess;
  return visit_dtype(dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    // Scratch: the selected indices, the sort's scratch, then the selected values.
    const int64_t sel = r.rows * r.keep;
    int64_t* sel_idx = static_cast<int64_t*>(scratch);
    unsigned char* sort_scratch = reinterpret_cast<unsigned char*>(sel_idx + sel);
    const size_t sort_bytes = sort_scratch_bytes(dtype, r.rows, r.keep);
    T* sel_vals = reinterpret_cast<T*>(sort_scratch + sort_bytes);
    const int64_t blocks = r.rows < kMaxBlocks ? r.rows : kMaxBlocks;
    simt::launch(radix_select_kernel<T>, dim3(static_cast<unsigned>(blocks)), dim3(kSelectThreads),
                 0, stream, static_cast<const T*>(in), r, largest, sel_vals, sel_idx);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) return err;
    // The selected rows are dense (rows x k): the sort reads them through a contiguous geometry
    // over the same row numbering and writes values/indices where topk's output goes.
    SortRows s = r;
    s.n = r.keep;
    s.in_stride = 1;
    int64_t stride = r.keep;
    for (int d = s.geom.ndim - 1; d >= 0; --d) {
      s.geom.strides[0][d] = stride;
      stride *= s.geom.sizes[d];
    }
    err = sort_rows(values, indices, sel_vals, dtype, s, largest,
                    sort_bytes > 0 ? sort_scratch : nullptr, stream);
    if (err != cudaSuccess) return err;
    simt::launch(topk_indices_kernel, grid_for(sel), dim3(kBlock), 0, stream, indices, sel_idx, r);
    return cudaGetLastError();
  });
}

}  // namespace ember::cuda_kernels
