// Launchers for the fused attention kernels (attention_kernels.cu). Tensors are contiguous;
// geometry and per-score math are kernels/attention_ops.h's, shared with the CPU backend.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/attention_ops.h"

namespace ember::cuda_kernels {

// Largest head dim (E and Ev) the fused kernels take; the op layer uses the math path above it.
inline constexpr int64_t kAttentionMaxHeadDim = 128;

// out (B, L, Ev) and lse (B, L) from q, k, v; mask as p describes it, or null.
cudaError_t attention_forward(DType dtype, void* out, void* lse, const void* q, const void* k,
                              const void* v, const void* mask, const AttentionParams& p,
                              cudaStream_t stream);

// dq, dk, dv from dout, the inputs and the forward's out and lse. dd: scratch of B * L
// accumulators (rowsum(dout * out)).
cudaError_t attention_backward(DType dtype, void* dq, void* dk, void* dv, void* dd,
                               const void* dout, const void* q, const void* k, const void* v,
                               const void* out, const void* lse, const void* mask,
                               const AttentionParams& p, cudaStream_t stream);

}  // namespace ember::cuda_kernels
