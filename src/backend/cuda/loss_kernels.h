// Launchers for the fused softmax cross-entropy / nll kernels (loss_kernels.cu). Plain types only,
// so the header compiles under nvcc and as C++ against the emulator.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backend/cuda/kernel_utils.h"
#include "ember/dtype.h"

namespace ember::cuda_kernels {

// The first out-of-range target a kernel met: hit is 0 until one is found.
struct LossFault {
  unsigned long long hit;
  long long value;
};

// Rows of `classes` contiguous elements of input (dtype T), int64 targets, weight (C, T) or null,
// weight_sum (one accumulator value: float for 16-bit T) or null for "C".
struct CrossEntropyArgs {
  const void* input = nullptr;
  const int64_t* target = nullptr;
  const void* weight = nullptr;
  const void* weight_sum = nullptr;
  int64_t rows = 0, classes = 0, ignore_index = -100;
  double label_smoothing = 0.0;
  bool from_logits = true;
};

// loss, row_weight, lse: (rows) in the accumulation dtype (see Backend::cross_entropy).
cudaError_t cross_entropy_forward(DType dtype, const CrossEntropyArgs& a, void* loss,
                                  void* row_weight, void* lse, LossFault* fault,
                                  cudaStream_t stream);
// grad_input (rows, classes) of dtype; grad_rows (accumulation dtype) read at i * grad_stride.
cudaError_t cross_entropy_backward(DType dtype, const CrossEntropyArgs& a, void* grad_input,
                                   const void* grad_rows, int64_t grad_stride, const void* lse,
                                   cudaStream_t stream);

}  // namespace ember::cuda_kernels
