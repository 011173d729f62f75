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

  // cuda_gemm.cpp
  void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha,
            double beta) override;
  // cuda_random.cpp
  void random(RandomOp op, const Tensor& out, uint64_t seed, uint64_t offset,
              const RandomParams& p) override;
  void bernoulli(const Tensor& out, const Tensor& p, uint64_t seed, uint64_t offset) override;
  void tril_triu(const Tensor& out, const Tensor& in, int64_t k, bool upper) override;
};

CudaBackend& cuda_backend();

}  // namespace ember
