// cumsum / cumprod on the device over contiguous (outer, n, inner) tensors: a block-level scan per
// row when n is the innermost dim (longer rows loop over tiles with a carried prefix), one thread
// per column otherwise (adjacent threads read adjacent columns), and when the columns are too few
// to fill the device, several threads per column, each on a chunk of the rows.
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"

#include "backend/cuda/reduce_kernels.cuh"

namespace ember::cuda_kernels {

namespace {

// Rows of n contiguous elements; blockDim (tpr, kReduceThreads / tpr), tpr 32 or kReduceThreads
// threads per row. Each tile of tpr elements: an inclusive warp scan by shuffles, then (tpr > 32)
// the warp totals through shared memory, then the carry of the earlier tiles.
template <class F, class T>
__global__ void __launch_bounds__(kReduceThreads, kMinBlocksPerSm)
    scan_rows_kernel(F f, const T* in, T* out, int64_t rows, int64_t n) {
  using A = typename F::acc_t;
  using C = compute_t<T>;
  __shared__ A warp_total[kReduceThreads / kWarp];
  const int tpr = blockDim.x;
  const int lane = threadIdx.x % kWarp;
  const int warps_per_row = tpr / kWarp;
  const int warp_in_row = threadIdx.x / kWarp;
  const int first_warp = threadIdx.y * warps_per_row;
  const int64_t per_block = blockDim.y;
  for (int64_t base = blockIdx.x * per_block; base < rows; base += gridDim.x * per_block) {
    const int64_t row = base + threadIdx.y;
    const bool active = row < rows;
    A carry = f.init();
    for (int64_t t0 = 0; t0 < n; t0 += tpr) {
      const int64_t i = t0 + threadIdx.x;
      const bool here = active && i < n;
      A v = here ? f.reduce(f.init(), static_cast<C>(in[row * n + i])) : f.init();
      for (int d = 1; d < kWarp; d *= 2) {
        const A u = shfl_up(v, d);
        if (lane >= d) v = f.combine(u, v);
      }
      A total;
      if (warps_per_row > 1) {
        if (lane == kWarp - 1) warp_total[first_warp + warp_in_row] = v;
        __syncthreads();
        A prefix = f.init();
        total = f.init();
        for (int w = 0; w < warps_per_row; ++w) {
          const A t = warp_total[first_warp + w];
          if (w < warp_in_row) prefix = f.combine(prefix, t);
          total = f.combine(total, t);
        }
        __syncthreads();
        v = f.combine(prefix, v);
      } else {
        total = __shfl_sync(kFullMask, v, kWarp - 1);
      }
      if (here) out[row * n + i] = cast<T>(f.combine(carry, v));
      carry = f.combine(carry, total);
    }
  }
}

// Columns (o, j) of (outer, n, inner): one thread each, sequential along n.
template <class F, class T>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSm)
    scan_columns_kernel(F f, const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = typename F::acc_t;
  using C = compute_t<T>;
  const int64_t cols = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = c / inner, j = c % inner;
    const T* x = in + o * n * inner + j;
    T* y = out + o * n * inner + j;
    A acc = f.init();
    for (int64_t i = 0; i < n; ++i) {
      acc = f.reduce(acc, static_cast<C>(x[i * inner]));
      y[i * inner] = cast<T>(acc);
    }
  }
}

// Columns when there are too few of them to fill the device with one thread each (a (4096, 4096)
// scan over dim 0 has 4096, a few warps per SM, each walking 4096 rows one load at a time):
// blockDim (kWarp, kScanChunks). A block takes kWarp adjacent columns of one outer index (its
// warps read whole rows, coalesced) and its kScanChunks warps split the n rows into consecutive
// chunks. Each thread combines its chunk, the chunk totals of a column meet in shared memory to
// give each chunk its carry, and each thread scans its chunk again from that carry: two reads and
// one write, with kScanChunks times the threads and loads in flight.
inline constexpr int kScanChunks = 16;
// Below this many columns the chunked kernel is used (when n has a row per chunk at least).
inline constexpr int64_t kChunkedColumnsBelow = 32768;

template <class F, class T>
__global__ void __launch_bounds__(kWarp* kScanChunks)
    scan_column_chunks_kernel(F f, const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = typename F::acc_t;
  using C = compute_t<T>;
  __shared__ A totals[kScanChunks][kWarp];
  const int64_t tiles_per_outer = (inner + kWarp - 1) / kWarp;
  const int64_t chunk = (n + kScanChunks - 1) / kScanChunks;
  const int64_t r0 = threadIdx.y * chunk;
  const int64_t r1 = r0 + chunk < n ? r0 + chunk : n;  // r0 >= n: an empty chunk
  for (int64_t tile = blockIdx.x; tile < outer * tiles_per_outer; tile += gridDim.x) {
    const int64_t o = tile / tiles_per_outer;
    const int64_t j = (tile % tiles_per_outer) * kWarp + threadIdx.x;
    const bool active = j < inner;
    const int64_t base = o * n * inner + j;
    A acc = f.init();
    if (active) {
      for (int64_t i = r0; i < r1; ++i) acc = f.reduce(acc, static_cast<C>(in[base + i * inner]));
    }
    totals[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    A carry = f.init();
    for (int g = 0; g < static_cast<int>(threadIdx.y); ++g) {
      carry = f.combine(carry, totals[g][threadIdx.x]);
    }
    __syncthreads();  // the next tile rewrites totals
    if (active) {
      for (int64_t i = r0; i < r1; ++i) {
        carry = f.reduce(carry, static_cast<C>(in[base + i * inner]));
        out[base + i * inner] = cast<T>(carry);
      }
    }
  }
}

template <class F, class T>
cudaError_t run_scan(const void* in_v, void* out_v, int64_t outer, int64_t n, int64_t inner,
                     cudaStream_t stream) {
  const F f;
  const T* in = static_cast<const T*>(in_v);
  T* out = static_cast<T*>(out_v);
  if (inner == 1) {
    const int tpr = n > 8 * kWarp ? kReduceThreads : kWarp;
    const int per_block = kReduceThreads / tpr;
    simt::launch(scan_rows_kernel<F, T>, dim3(grid_for(outer, per_block)), dim3(tpr, per_block), 0,
                 stream, f, in, out, outer, n);
  } else if (outer * inner < kChunkedColumnsBelow && n >= kScanChunks) {
    const int64_t tiles = outer * ((inner + kWarp - 1) / kWarp);
    simt::launch(scan_column_chunks_kernel<F, T>, dim3(grid_for(tiles, 1)),
                 dim3(kWarp, kScanChunks), 0, stream, f, in, out, outer, n, inner);
  } else {
    simt::launch(scan_columns_kernel<F, T>, dim3(grid_for(outer * inner)), dim3(kBlock), 0, stream,
                 f, in, out, outer, n, inner);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t scan(ScanOp op, DType dtype, const void* in, void* out, int64_t outer, int64_t n,
                 int64_t inner, cudaStream_t stream) {
  return visit_dtype(dtype, [&](auto tag) -> cudaError_t {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    // The accumulators of sum / prod: running values in float, double or int64 (wrapping).
    if (op == ScanOp::CumSum) {
      return run_scan<rd::SumOp<C, device_acc_t<C>>, T>(in, out, outer, n, inner, stream);
    }
    return run_scan<rd::ProdOp<C, device_acc_t<C>>, T>(in, out, outer, n, inner, stream);
  });
}

}  // namespace ember::cuda_kernels
