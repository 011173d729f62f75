// Launchers for the mixed-precision kernels (amp_kernels.cu): the multi-tensor inf/NaN check and
// unscale, cut into chunks like the optimizer update, and the single-thread scale update.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"

namespace ember::cuda_kernels {

// Elements per chunk.
inline constexpr int64_t kAmpChunk = 65536;
// Table layout (int64 words): per tensor kAmpTensorWords words (data pointer, numel, id), then
// per chunk two words (tensor index, first element).
inline constexpr int kAmpTensorWords = 3;

// Unscales the ntensors gradients of dtype described by table (device memory) in one launch;
// found_inf and inv_scale point to one float each, first_bad to one int32 (or null).
cudaError_t amp_unscale_multi_tensor(DType dtype, const int64_t* table, int ntensors,
                                     int64_t nchunks, float* found_inf, const float* inv_scale,
                                     int32_t* first_bad, cudaStream_t stream);

// amp_update_scale_value on the device, one thread.
cudaError_t amp_update_scale(float* scale, int32_t* growth_tracker, const float* found_inf,
                             double growth_factor, double backoff_factor, int64_t growth_interval,
                             cudaStream_t stream);

// Launches of amp_unscale_multi_tensor so far (tests check that one group is one launch).
int64_t amp_unscale_launch_count();

}  // namespace ember::cuda_kernels
