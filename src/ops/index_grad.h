// The recorded forms of joining, indexing and sorting: each runs the plain op with grad mode off
// and records its node. The public op calls its recorded form when autograd::needs_grad says so.
// Formulas: index_grad.cpp.
#pragma once

#include "ember/ops.h"

namespace ember::grad_ops {

Tensor cat(const TensorList& tensors, int64_t dim);
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, bool add);
Tensor scatter_value(const Tensor& x, int64_t dim, const Tensor& index, Scalar value);
Tensor index(const Tensor& x, const TensorList& indices);
Tensor index_put(const Tensor& x, const TensorList& indices, const Tensor& values, bool accumulate);
Tensor embedding(const Tensor& weight, const Tensor& indices);
Tensor tril_triu(const Tensor& x, int64_t diagonal, bool upper);
std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending, bool stable);
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool sorted);

}  // namespace ember::grad_ops
