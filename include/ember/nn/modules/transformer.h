// MultiheadAttention and TransformerEncoderLayer, with PyTorch's parameter names, initialisation
// and mask conventions, so state dicts interchange:
//   nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(64, 8).batch_first(true));
//   auto [out, weights] = mha->forward(x, x, x);
#pragma once

#include <string>
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads) {}
  EMBER_ARG(int64_t, embed_dim);
  EMBER_ARG(int64_t, num_heads);
  // Dropout on the attention weights (training mode only).
  EMBER_ARG(double, dropout) = 0.0;
  EMBER_ARG(bool, bias) = true;
  // Inputs (N, L, E) instead of (L, N, E).
  EMBER_ARG(bool, batch_first) = false;
};

// PyTorch's out_proj type: a Linear printed under its own name.
class NonDynamicallyQuantizableLinearImpl : public LinearImpl {
 public:
  using LinearImpl::LinearImpl;
  void pretty_print(std::ostream& out) const override;
};
EMBER_MODULE(NonDynamicallyQuantizableLinear);

// Attention over num_heads heads of embed_dim / num_heads dims. Parameters: in_proj_weight
// (3E, E, xavier uniform), in_proj_bias (3E, zeros), out_proj.weight/bias (bias zeros).
class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  // query (L, N, E), key and value (S, N, E) ((N, L, E) with batch_first; (L, E) unbatched).
  // key_padding_mask (N, S): true (or -inf when floating) hides a key. attn_mask (L, S) or
  // (N * num_heads, L, S): true hides a position, a float mask is added. is_causal without an
  // attn_mask hides keys after each query (with one, it is taken to be that mask).
  // Returns the output (query's layout) and, with need_weights, the attention weights (N, L, S)
  // averaged over heads, or (N, num_heads, L, S); undefined otherwise.
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {},
                                     bool average_attn_weights = true, bool is_causal = false);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  MultiheadAttentionOptions options;
  int64_t head_dim;
  Tensor in_proj_weight;
  Tensor in_proj_bias;
  NonDynamicallyQuantizableLinear out_proj = nullptr;
};
EMBER_MODULE(MultiheadAttention);

}  // namespace ember::nn
