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
  void unary(UnaryOp op, const Tensor& out, const Tensor& in, const ElementwiseParams& p) override;
  void binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b,
              const ElementwiseParams& p) override;
  void ternary(TernaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c,
               const ElementwiseParams& p) override;
  void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) override;
};

CudaBackend& cuda_backend();

}  // namespace ember
