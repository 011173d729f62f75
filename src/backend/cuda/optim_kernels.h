// Launcher for the fused multi-tensor optimizer update (optim_kernels.cu): like PyTorch's
// multi_tensor_apply, the parameters are cut into chunks and one launch updates them all, each
// block taking chunks from a table in device memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "ember/dtype.h"
#include "kernels/optim_ops.h"

namespace ember::cuda_kernels {

// Elements per chunk (a multiple of the 4-element vector width).
inline constexpr int64_t kOptimChunk = 65536;
// Table layout (int64 words): per tensor kOptimTensorWords words (slot pointers, numel, the bits
// of scalars a and b, flags), then per chunk two words (tensor index, first element).
inline constexpr int kOptimTensorWords = kOptimSlots + 4;
inline constexpr int64_t kOptimFlagFirst = 1;    // OptimTensorScalars::first
inline constexpr int64_t kOptimFlagAligned = 2;  // every slot pointer is 4-element aligned

// Updates the ntensors tensors of dtype described by table (device memory) in one launch.
cudaError_t optim_multi_tensor(OptimOp op, DType dtype, const OptimHyper& h, const int64_t* table,
                               int ntensors, int64_t nchunks, cudaStream_t stream);

// Launches of optim_multi_tensor so far (tests check that one step is one launch).
int64_t optim_launch_count();

}  // namespace ember::cuda_kernels
