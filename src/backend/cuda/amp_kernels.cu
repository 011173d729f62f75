// Mixed-precision kernels: every block walks chunks of the gradient table (grid-stride), unscales
// its elements in place and raises the shared found_inf flag (and lowers first_bad) when it saw a
// non-finite value; the scale's update runs in one thread so it never leaves the device.
// clang-format off
// simt.h comes first: in the emulated build it defines the CUDA qualifiers before any CUDA header.
#include "simt/simt.h"
// clang-format on

#include <atomic>

#include "backend/cuda/amp_kernels.h"
#include "backend/cuda/kernel_utils.h"
#include "core/dispatch.h"
#include "ember/half.h"
#include "kernels/amp_ops.h"
#include "kernels/cast.h"

namespace ember::cuda_kernels {

namespace {

std::atomic<int64_t> g_launches{0};

template <class T>
__global__ void __launch_bounds__(kBlock, kMinBlocksPerSmOf<T>)
    amp_unscale_kernel(const int64_t* table, int ntensors, int64_t nchunks, float* found_inf,
                       const float* inv_scale, int32_t* first_bad) {
  using C = compute_t<T>;
  const int64_t* chunks = table + static_cast<int64_t>(ntensors) * kAmpTensorWords;
  const float inv = *inv_scale;
  for (int64_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
    const int64_t t = chunks[2 * c];
    const int64_t start = chunks[2 * c + 1];
    const int64_t* e = table + t * kAmpTensorWords;
    T* g = reinterpret_cast<T*>(e[0]);
    const int64_t n = e[1];
    const int64_t end = start + kAmpChunk < n ? start + kAmpChunk : n;
    bool all_finite = true;
    for (int64_t i = start + threadIdx.x; i < end; i += blockDim.x) {
      bool finite = true;
      g[i] = cast<T>(amp_unscale_value<C>(cast<C>(g[i]), inv, finite));
      all_finite = all_finite && finite;
    }
    if (!all_finite) {
      *found_inf = 1.0f;  // every writer stores the same value
      if (first_bad != nullptr) atomicMin(first_bad, static_cast<int32_t>(e[2]));
    }
  }
}

__global__ void amp_update_scale_kernel(float* scale, int32_t* growth_tracker,
                                        const float* found_inf, double growth_factor,
                                        double backoff_factor, int64_t growth_interval) {
  amp_update_scale_value(*scale, *growth_tracker, *found_inf, growth_factor, backoff_factor,
                         growth_interval);
}

}  // namespace

cudaError_t amp_unscale_multi_tensor(DType dtype, const int64_t* table, int ntensors,
                                     int64_t nchunks, float* found_inf, const float* inv_scale,
                                     int32_t* first_bad, cudaStream_t stream) {
  if (nchunks <= 0) return cudaSuccess;
  return visit_float_dtype(dtype, "_amp_foreach_non_finite_check_and_unscale_", [&](auto type_tag) {
    using T = typename decltype(type_tag)::type;
    const unsigned grid = static_cast<unsigned>(nchunks < kMaxBlocks ? nchunks : kMaxBlocks);
    simt::launch(amp_unscale_kernel<T>, dim3(grid), dim3(kBlock), 0, stream, table, ntensors,
                 nchunks, found_inf, inv_scale, first_bad);
    g_launches.fetch_add(1, std::memory_order_relaxed);
    return cudaGetLastError();
  });
}

cudaError_t amp_update_scale(float* scale, int32_t* growth_tracker, const float* found_inf,
                             double growth_factor, double backoff_factor, int64_t growth_interval,
                             cudaStream_t stream) {
  simt::launch(amp_update_scale_kernel, dim3(1), dim3(1), 0, stream, scale, growth_tracker,
               found_inf, growth_factor, backoff_factor, growth_interval);
  return cudaGetLastError();
}

int64_t amp_unscale_launch_count() { return g_launches.load(std::memory_order_relaxed); }

}  // namespace ember::cuda_kernels
