// Sorting ops: sort, argsort, topk. NaN orders as the largest value, as in PyTorch.
#include "autograd/function.h"
#include "ops/index_grad.h"
#include "ops/op_utils.h"

namespace ember {

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  if (autograd::needs_grad({&x})) return grad_ops::sort(x, dim, descending, stable);
  if (!x.defined()) throw ValueError("[sort] the input tensor is undefined");
  dim = wrap_dim("sort", dim, x.dim());
  Tensor values = make_empty(x.sizes(), x.dtype(), x.device(), false, "sort");
  Tensor indices = make_empty(x.sizes(), kInt64, x.device(), false, "sort");
  if (x.numel() > 0) backend(x.device()).sort(values, indices, x, dim, descending, stable);
  return {values, indices};
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending, bool stable) {
  return std::get<1>(sort(x, dim, descending, stable));
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  if (autograd::needs_grad({&x})) return grad_ops::topk(x, k, dim, largest, sorted);
  if (!x.defined()) throw ValueError("[topk] the input tensor is undefined");
  if (x.dtype() == kBool) throw TypeError("[topk] not implemented for dtype bool");
  dim = wrap_dim("topk", dim, x.dim());
  const int64_t size = x.dim() == 0 ? 1 : x.sizes()[dim];
  if (k < 0 || k > size) {
    throw IndexError("[topk] selected index k out of range: k is " + std::to_string(k) +
                     " but dimension " + std::to_string(dim) + " of shape " + shape_str(x) +
                     " has size " + std::to_string(size));
  }
  Shape shape = x.sizes();
  if (x.dim() > 0)
    shape[dim] = k;
  else if (k == 0)
    shape = Shape{0};
  Tensor values = make_empty(shape, x.dtype(), x.device(), false, "topk");
  Tensor indices = make_empty(shape, kInt64, x.device(), false, "topk");
  if (values.numel() > 0) {
    backend(x.device()).topk(values, indices, x, k, dim, largest, sorted);
  }
  return {values, indices};
}

std::tuple<Tensor, Tensor> Tensor::sort(int64_t dim, bool descending, bool stable) const {
  return ember::sort(*this, dim, descending, stable);
}
Tensor Tensor::argsort(int64_t dim, bool descending, bool stable) const {
  return ember::argsort(*this, dim, descending, stable);
}
std::tuple<Tensor, Tensor> Tensor::topk(int64_t k, int64_t dim, bool largest, bool sorted) const {
  return ember::topk(*this, k, dim, largest, sorted);
}

}  // namespace ember
