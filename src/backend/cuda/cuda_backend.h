// The CUDA backend: device memory, transfers and kernels over the CUDA runtime.
#pragma once

#include "backend/backend.h"

namespace ember {

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "CUDA"; }
  Allocator& allocator(Device device, bool pinned) override;

  void copy(const Tensor& dst, const Tensor& src) override;
  void fill(const Tensor& dst, Scalar value) override;

  // Reductions, scans and softmax (cuda_reduce.cpp).
  void reduce(ReduceOp op, const Tensor& out, const Tensor& in, const ReduceParams& p) override;
  void reduce_with_index(ReduceOp op, const Tensor& values, const Tensor& indices,
                         const Tensor& in, int64_t dim) override;
  void scan(ScanOp op, const Tensor& out, const Tensor& in, int64_t dim) override;
  void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) override;
};

CudaBackend& cuda_backend();

}  // namespace ember
