// The recorded forms of the matmul family: each runs the plain op with grad mode off and records
// its node. The public op calls its recorded form when autograd::needs_grad says so. Formulas:
// linalg_grad.cpp.
#pragma once

#include "ember/ops.h"

namespace ember::grad_ops {

Tensor mm(const Tensor& a, const Tensor& b);
Tensor bmm(const Tensor& a, const Tensor& b);
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha);
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);
Tensor dot(const Tensor& a, const Tensor& b);

}  // namespace ember::grad_ops
