// What both backends check and reshape before their reduction kernels run: the operands the op
// layer hands to Backend::reduce and Backend::reduce_with_index.
#pragma once

#include <string>

#include "ember/error.h"
#include "ember/tensor.h"
#include "kernels/reduce_ops.h"

namespace ember {

// out has in's rank (the keepdim layout) and the dtype the op layer chose: in's, int64 for the
// sum or product of integers, bool or uint8 for any/all. Anything else is a caller's bug.
inline void check_reduce_operands(ReduceOp op, const Tensor& out, const Tensor& in) {
  if (out.dim() != in.dim()) {
    throw Error("[reduce] output rank " + std::to_string(out.dim()) + " differs from input rank " +
                std::to_string(in.dim()));
  }
  const bool logical = op == ReduceOp::Any || op == ReduceOp::All;
  const bool widen = (op == ReduceOp::Sum || op == ReduceOp::Prod) && out.dtype() == kInt64 &&
                     is_integral(in.dtype(), true);
  if (logical ? (out.dtype() != kBool && out.dtype() != kUInt8)
              : (out.dtype() != in.dtype() && !widen)) {
    throw Error("[reduce] unexpected output dtype " + std::string(dtype_name(out.dtype())) +
                " for input dtype " + std::string(dtype_name(in.dtype())));
  }
}

// The keepdim layout of a per-dim result (max/min values and indices): rank-(n-1) outputs get
// their reduced dim back.
inline Tensor with_reduced_dim(const Tensor& t, const Tensor& in, int64_t dim) {
  if (t.dim() == in.dim()) return t;
  return t.unsqueeze(dim);
}

// max/min along a zero-size dim has no answer (PyTorch's IndexError).
inline void check_reduced_dim_not_empty(const Tensor& in, int64_t dim) {
  if (in.dim() > 0 && in.size(dim) == 0) {
    throw IndexError("[max/min] cannot reduce over a zero-size dimension " + std::to_string(dim));
  }
}

}  // namespace ember
