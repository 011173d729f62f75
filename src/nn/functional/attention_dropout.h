// Dropout of attention weights, shared by scaled_dot_product_attention and MultiheadAttention.
#pragma once

#include "ember/tensor.h"

namespace ember::nn::detail {

// x with each element zeroed with probability p and the rest scaled by 1 / (1 - p).
Tensor attention_dropout(const Tensor& x, double p);

}  // namespace ember::nn::detail
