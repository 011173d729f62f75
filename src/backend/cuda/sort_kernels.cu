// Sorting kernels: each row is cut into tiles that one block sorts in shared memory (bitonic
// network); rows longer than a tile are then merged pairwise in global memory, each element
// finding its place by a binary search in the partner run. Elements compare by (key, index) with
// NaN above every number, a strict total order: the result is stable and does not depend on
// thread order.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include <utility>

#include "backend/cuda/index_kernels.h"
#include "core/dispatch.h"

namespace ember::cuda_kernels {

namespace {

constexpr int64_t kSortTile = 2048;          // elements per shared-memory tile (power of two)
constexpr int64_t kMaxSortBlocks = 1 << 20;  // block-stride loop beyond

// Whether (a, ia) comes before (b, ib): keys in the requested direction, NaN largest, ties by
// index ascending (as the CPU backend orders).
template <class T>
__device__ inline bool before(T a, int64_t ia, T b, int64_t ib, bool descending) {
  using K = compute_t<T>;
  const K x = static_cast<K>(a), y = static_cast<K>(b);
  if constexpr (is_float_type_v<T>) {
    const bool xn = x != x, yn = y != y;
    if (xn || yn) {
      if (xn && yn) return ia < ib;
      return descending ? xn : yn;
    }
  }
  if (x != y) return descending ? x > y : x < y;
  return ia < ib;
}

// Sorts tile number (blockIdx-strided) of every row: P (a power of two >= the tile's length)
// slots in shared memory, the slots past the tile's length padded to sort last. A row of one
// tile goes straight to values/indices; otherwise the sorted tile goes to the scratch row.
template <class T>
__global__ void block_sort_kernel(const T* in, T* values, int64_t* indices, SortRows r, int P,
                                  bool descending, T* tmp_keys, int64_t* tmp_idx) {
  SIMT_DYNAMIC_SHARED(unsigned char, smem);
  T* keys = reinterpret_cast<T*>(smem);
  int* loc = reinterpret_cast<int*>(smem + static_cast<size_t>(P) * sizeof(T));
  const int64_t tiles = (r.n + kSortTile - 1) / kSortTile;
  const int half = P / 2;
  for (int64_t b = blockIdx.x; b < r.rows * tiles; b += gridDim.x) {
    const int64_t row = b / tiles, t0 = (b % tiles) * kSortTile;
    const int cnt = static_cast<int>(r.n - t0 < kSortTile ? r.n - t0 : kSortTile);
    int64_t off[3];
    r.geom.offsets(row, off);
    for (int p = threadIdx.x; p < P; p += blockDim.x) {
      keys[p] = p < cnt ? in[off[0] + (t0 + p) * r.in_stride] : T();
      loc[p] = p;
    }
    __syncthreads();
    // Padding (loc >= cnt) orders after every element, among itself by slot.
    auto first = [&](int i, int l) {
      if (loc[i] >= cnt || loc[l] >= cnt) return loc[i] < loc[l];
      return before(keys[i], loc[i], keys[l], loc[l], descending);
    };
    for (int k = 2; k <= P; k <<= 1) {
      for (int j = k >> 1; j > 0; j >>= 1) {
        for (int t = threadIdx.x; t < half; t += blockDim.x) {
          const int i = 2 * t - (t & (j - 1)), l = i + j;
          const bool up = (i & k) == 0;
          if (first(l, i) == up) {
            const T kt = keys[i];
            keys[i] = keys[l];
            keys[l] = kt;
            const int lt = loc[i];
            loc[i] = loc[l];
            loc[l] = lt;
          }
        }
        __syncthreads();
      }
    }
    if (tiles == 1) {
      const int keep = static_cast<int>(r.keep < cnt ? r.keep : cnt);
      for (int p = threadIdx.x; p < keep; p += blockDim.x) {
        values[off[1] + p * r.v_stride] = keys[p];
        indices[off[2] + p * r.i_stride] = loc[p];
      }
    } else {
      for (int p = threadIdx.x; p < cnt; p += blockDim.x) {
        tmp_keys[row * r.n + t0 + p] = keys[p];
        tmp_idx[row * r.n + t0 + p] = t0 + loc[p];
      }
    }
    __syncthreads();  // the next tile reuses shared memory
  }
}

// Merges sorted runs of width w pairwise in every row of the scratch (rows x n, contiguous).
// Element p of a run lands at (run pair start) + (its rank in its run) + (elements of the
// partner run before it). The last pass writes the first keep of each row to values/indices.
template <class T>
__global__ void merge_kernel(const T* src_keys, const int64_t* src_idx, T* dst_keys,
                             int64_t* dst_idx, SortRows r, int64_t w, bool descending, bool last,
                             T* values, int64_t* indices) {
  const int64_t total = r.rows * r.n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += step) {
    const int64_t row = e / r.n, p = e - row * r.n;
    const int64_t run = p / w, start = run * w, partner = (run ^ 1) * w;
    const T* rk = src_keys + row * r.n;
    const int64_t* ri = src_idx + row * r.n;
    const T key = rk[p];
    const int64_t idx = ri[p];
    int64_t lo = 0;
    if (partner < r.n) {
      int64_t hi = r.n - partner < w ? r.n - partner : w;
      while (lo < hi) {
        const int64_t mid = (lo + hi) / 2;
        if (before(rk[partner + mid], ri[partner + mid], key, idx, descending)) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
    }
    const int64_t dest = (start < partner ? start : partner) + (p - start) + lo;
    if (!last) {
      dst_keys[row * r.n + dest] = key;
      dst_idx[row * r.n + dest] = idx;
    } else if (dest < r.keep) {
      int64_t off[3];
      r.geom.offsets(row, off);
      values[off[1] + dest * r.v_stride] = key;
      indices[off[2] + dest * r.i_stride] = idx;
    }
  }
}

int pow2_at_least(int64_t n) {
  int p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

int64_t sort_tile(DType) { return kSortTile; }

size_t sort_scratch_bytes(DType dtype, int64_t rows, int64_t n) {
  if (n <= kSortTile) return 0;
  return 2 * static_cast<size_t>(rows * n) * (sizeof(int64_t) + element_size(dtype));
}

cudaError_t sort_rows(void* values, int64_t* indices, const void* in, DType dtype,
                      const SortRows& r, bool descending, void* scratch, cudaStream_t stream) {
  if (r.rows <= 0 || r.n <= 0 || r.keep <= 0) return cudaSuccess;
  return visit_dtype(dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    const int64_t elems = r.rows * r.n;
    // Scratch: two index buffers, then two key buffers (8-byte aligned first).
    int64_t* idx_a = static_cast<int64_t*>(scratch);
    int64_t* idx_b = idx_a ? idx_a + elems : nullptr;
    T* keys_a = idx_a ? reinterpret_cast<T*>(idx_b + elems) : nullptr;
    T* keys_b = keys_a ? keys_a + elems : nullptr;
    const int64_t tiles = (r.n + kSortTile - 1) / kSortTile;
    const int P = pow2_at_least(r.n < kSortTile ? r.n : kSortTile);
    const int threads = P / 2 < kBlock ? (P / 2 > 0 ? P / 2 : 1) : kBlock;
    const size_t smem = static_cast<size_t>(P) * (sizeof(T) + sizeof(int));
    const int64_t blocks = r.rows * tiles < kMaxSortBlocks ? r.rows * tiles : kMaxSortBlocks;
    simt::launch(block_sort_kernel<T>, dim3(static_cast<unsigned>(blocks)), dim3(threads), smem,
                 stream, static_cast<const T*>(in), static_cast<T*>(values), indices, r, P,
                 descending, keys_a, idx_a);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess || tiles == 1) return err;
    for (int64_t w = kSortTile; w < r.n; w *= 2) {
      const bool last = 2 * w >= r.n;
      simt::launch(merge_kernel<T>, grid_for(elems), dim3(kBlock), 0, stream, keys_a, idx_a, keys_b,
                   idx_b, r, w, descending, last, static_cast<T*>(values), indices);
      if ((err = cudaGetLastError()) != cudaSuccess) return err;
      std::swap(keys_a, keys_b);
      std::swap(idx_a, idx_b);
    }
    return cudaSuccess;
  });
}

}  // namespace ember::cuda_kernels
