// Launchers for the CUDA normalisation and dropout kernels (norm_kernels.cu). Tensors are
// contiguous; geometry and math are kernels/norm_ops.h's, shared with the CPU backend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/norm_ops.h"

namespace ember::cuda_kernels {

// mean, rstd (p.stats() accumulators) of x; running_mean/var (dtype, or null) updated in place.
cudaError_t norm_stats(DType dtype, const void* x, void* mean, void* rstd, void* running_mean,
                       void* running_var, const NormParams& p, cudaStream_t stream);

// y = (x - mean) * rstd * w + b; w and b may be null.
cudaError_t norm_forward(DType dtype, void* y, const void* x, const void* mean, const void* rstd,
                         const void* w, const void* b, const NormParams& p, cudaStream_t stream);

// Any of dx, dw, db may be null. sums: scratch for 2 * p.channels accumulators, needed when dw,
// db or (batch norm) dx is wanted.
cudaError_t norm_backward(DType dtype, void* dx, void* dw, void* db, void* sums, const void* dy,
                          const void* x, const void* mean, const void* rstd, const void* w,
                          const NormParams& p, cudaStream_t stream);

// y = keep ? x / (1 - p) : 0, mask = keep, over n contiguous elements.
cudaError_t dropout(DType dtype, void* y, bool* mask, const void* x, int64_t n, double p,
                    uint64_t seed, uint64_t offset, cudaStream_t stream,
                    const uint64_t* philox_state = nullptr);

}  // namespace ember::cuda_kernels
