// Joining ops: cat and stack, built from narrow(...).copy_(...) so every backend gets them from
// its copy kernel (which also converts dtypes).
#include "autograd/function.h"
#include "ops/autocast.h"
#include "ops/index_grad.h"
#include "ops/op_utils.h"

namespace ember {

Tensor cat(const TensorList& tensors, int64_t dim) {
  if (!tensors.empty() && autocast::active(autocast::Op::cat, tensors[0])) {
    autocast::Scope s(autocast::Op::cat, tensors[0], tensors);
    return cat(s.inputs(), dim);
  }
  if (autograd::needs_grad(tensors)) return grad_ops::cat(tensors, dim);
  const char* op = "cat";
  if (tensors.empty()) throw ValueError("[cat] expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) {
      throw ValueError("[cat] tensor number " + std::to_string(i) + " in the list is undefined");
    }
    if (tensors[i].dim() == 0) {
      throw ValueError("[cat] zero-dimensional tensor (at position " + std::to_string(i) +
                       ") cannot be concatenated");
    }
  }
  Device dev = common_device(op, tensors);
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) dtype = promote_types(dtype, t.dtype());
  // Legacy behaviour: 1-D empty tensors take part in type promotion only.
  auto skipped = [](const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; };
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (!skipped(t)) {
      ref = &t;
      break;
    }
  }
  if (!ref) {
    wrap_dim(op, dim, 1);
    return make_empty({0}, dtype, dev, false, op);
  }
  dim = wrap_dim(op, dim, ref->dim());
  Shape shape = ref->sizes();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped(t)) continue;
    if (t.dim() != ref->dim()) {
      throw ValueError("[cat] Tensors must have same number of dimensions: got " +
                       std::to_string(ref->dim()) + " and " + std::to_string(t.dim()) +
                       " (shapes " + shape_str(*ref) + " and " + shape_str(t) +
                       " for tensor number " + std::to_string(i) + " in the list)");
    }
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (d != dim && t.sizes()[d] != shape[d]) {
        throw ValueError("[cat] Sizes of tensors must match except in dimension " +
                         std::to_string(dim) + ". Expected size " + std::to_string(shape[d]) +
                         " but got size " + std::to_string(t.sizes()[d]) + " for tensor number " +
                         std::to_string(i) + " in the list (shapes " + shape_str(*ref) + " and " +
                         shape_str(t) + ").");
      }
    }
    total += t.sizes()[dim];
  }
  shape[dim] = total;
  Tensor out = make_empty(shape, dtype, dev, false, op);
  if (out.numel() == 0) return out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped(t)) continue;
    const int64_t len = t.sizes()[dim];
    if (len > 0) out.narrow(dim, offset, len).copy_(t);
    offset += len;
  }
  return out;
}

Tensor stack(const TensorList& tensors, int64_t dim) {
  if (!tensors.empty() && autocast::active(autocast::Op::stack, tensors[0])) {
    autocast::Scope s(autocast::Op::stack, tensors[0], tensors);
    return stack(s.inputs(), dim);
  }
  if (tensors.empty()) throw ValueError("[stack] expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (!tensors[i].defined()) {
      throw ValueError("[stack] tensor number " + std::to_string(i) + " in the list is undefined");
    }
    if (tensors[i].sizes() != tensors[0].sizes()) {
      throw ValueError("[stack] stack expects each tensor to be equal size, but got " +
                       shape_str(tensors[0]) + " at entry 0 and " + shape_str(tensors[i]) +
                       " at entry " + std::to_string(i));
    }
  }
  dim = wrap_dim("stack", dim, tensors[0].dim() + 1);
  TensorList parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(dim));
  return cat(parts, dim);
}

}  // namespace ember
