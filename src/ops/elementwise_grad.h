// Graph recording for the element-wise families: the node, saved tensors and formulas of each
// op come from kernels/elementwise_ops.def (expanded in elementwise_grad.cpp).
#pragma once

#include "ember/tensor.h"
#include "kernels/elementwise_ops.h"

namespace ember {

// Each makes `out` the result of a node over the inputs (no-op for non-floating outputs).
void record_unary(UnaryOp op, const Tensor& x, const Tensor& out, const ElementwiseParams& p);
void record_binary(BinaryOp op, const Tensor& a, const Tensor& b, const Tensor& out,
                   const ElementwiseParams& p);
void record_ternary(TernaryOp op, const Tensor& a, const Tensor& b, const Tensor& c,
                    const Tensor& out, const ElementwiseParams& p);
// ReLU's derivative in one element-wise pass: grad where result > 0, else 0 (PyTorch's
// threshold_backward with threshold 0). grad and result: the same shape and floating dtype.
Tensor relu_backward(const Tensor& grad, const Tensor& result);

void record_where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& out);

}  // namespace ember
