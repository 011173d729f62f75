// The CUDA backend: device memory, transfers and kernels over the CUDA runtime.
#pragma once

#include "backend/backend.h"

namespace ember {

class CudaBackend final : public Backend {
 public:
  const char* name() const override { return "CUDA"; }
  Allocator& allocator(Device device, bool pinned) override;

  bool is_pinned(const void* data) const override;

  void copy(const Tensor& dst, const Tensor& src) override;
  void transfer(const Tensor& dst, const Tensor& src, bool non_blocking) override;
  void fill(const Tensor& dst, Scalar value) override;
};

CudaBackend& cuda_backend();

}  // namespace ember
