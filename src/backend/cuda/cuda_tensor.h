// Host-side glue between tensors and CUDA kernels: device indices and operand geometry.
#pragma once

#include <string>

#include "backend/cuda/kernel_utils.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::cuda_detail {

// The device index of a CUDA device (the current device when it has none).
inline int device_index(Device d) { return d.has_index() ? d.index() : cuda::current_device(); }

// The geometry of operands that share ts[0]'s shape (inputs already broadcast, stride 0), with
// size-1 dims dropped and dims merged where every operand is contiguous across them.
template <int N>
cuda_kernels::Strided<N> strided_of(const Tensor* const (&ts)[N], const char* op) {
  cuda_kernels::Strided<N> g;
  const Tensor& out = *ts[0];
  int nd = 0;
  for (int64_t d = 0; d < out.dim(); ++d) {
    const int64_t size = out.sizes()[d];
    if (size == 1) continue;
    if (nd > 0) {  // merge with the previous kept dim when every operand allows it
      bool merge = true;
      for (int k = 0; k < N; ++k) {
        merge &= ts[k]->strides()[d] * size == g.strides[k][nd - 1];
      }
      if (merge) {
        g.sizes[nd - 1] *= size;
        for (int k = 0; k < N; ++k) g.strides[k][nd - 1] = ts[k]->strides()[d];
        continue;
      }
    }
    if (nd == cuda_kernels::kMaxDims) {
      throw NotImplementedError(std::string("[") + op + "] CUDA tensors with more than " +
                                std::to_string(cuda_kernels::kMaxDims) +
                                " non-mergeable dims are not supported");
    }
    g.sizes[nd] = size;
    for (int k = 0; k < N; ++k) g.strides[k][nd] = ts[k]->strides()[d];
    ++nd;
  }
  g.ndim = nd;
  return g;
}

}  // namespace ember::cuda_detail
