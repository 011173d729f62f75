// The recorded forms of the reductions, scans and softmax: each runs the plain op with grad mode
// off and records its node. The public op calls its recorded form when autograd::needs_grad says
// so. Formulas: reduce_grad.cpp.
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

}  // namespace ember::grad_ops
