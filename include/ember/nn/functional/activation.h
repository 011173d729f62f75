// Activations and attention (nn::functional). The activations that are core ops are the same
// functions as in ops.h (F::relu is ember::relu); the rest are composed of them.
#pragma once

#include <optional>

#include "ember/ops.h"
#include "ember/tensor.h"

namespace ember::nn::functional {

using ember::elu;
using ember::gelu;  // approximate: "none" or "tanh"
using ember::leaky_relu;
using ember::log_softmax;
using ember::relu;
using ember::sigmoid;
using ember::silu;
using ember::softmax;
using ember::softplus;
using ember::tanh;

// x clamped to [min_val, max_val].
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
// min(max(x, 0), 6).
Tensor relu6(const Tensor& x);
// x * tanh(softplus(x)).
Tensor mish(const Tensor& x);

// softmax(q k^T * scale + mask) v over q (..., L, E), k (..., S, E), v (..., S, Ev) -> (..., L, Ev)
// with batch dims broadcast. attn_mask (L, S) or broadcastable to (..., L, S): bool (true = may
// attend) or floating (added to the scores). is_causal masks positions j > i (and excludes
// attn_mask). scale defaults to 1 / sqrt(E); a fully masked query row gives 0. dropout_p > 0
// applies F::dropout to the attention weights (always, as PyTorch's functional does; modules pass
// 0 in evaluation). Without dropout it runs fused kernels that never hold the (L, S) scores;
// q, k and v share one floating dtype and device.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask = {}, double dropout_p = 0.0,
                                    bool is_causal = false,
                                    std::optional<double> scale = std::nullopt);

}  // namespace ember::nn::functional
