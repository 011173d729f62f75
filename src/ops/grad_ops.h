// The recorded forms of ops whose forward is one kernel (reductions, softmax, matmul, indexing,
// joining, sorting): each runs the plain op with grad mode off and records its node. The public
// op calls its recorded form when autograd::needs_grad says so. Formulas: grad_ops.cpp.
#pragma once

#include "ember/ops.h"

namespace ember::grad_ops {

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim,
           std::optional<DType> dtype);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
Tensor prod(const Tensor& x, std::optional<int64_t> dim, bool keepdim);
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, bool is_max,
            const char* name);
std::tuple<Tensor, Tensor> max_dim(const Tensor& x, int64_t dim, bool keepdim, bool is_max);
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, int64_t correction, bool keepdim,
           bool is_std);
Tensor norm(const Tensor& x, double p, const std::vector<int64_t>& dims, bool keepdim);
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim);
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor cumprod(const Tensor& x, int64_t dim, std::optional<DType> dtype);
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype, bool log);

Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
Tensor dot(const Tensor& a, const Tensor& b);

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
