// MultiheadAttention and TransformerEncoderLayer, with PyTorch's parameter names, initialisation
// and mask conventions, so state dicts interchange:
//   nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(64, 8).batch_first(true));
//   auto [out, weights] = mha->forward(x, x, x);
//   nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(64,
//   8).dim_feedforward(256));
#pragma once

#include <string>
#include <tuple>

#include "ember/nn/module.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/norm.h"
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
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true,
                                     bool is_causal = false);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  MultiheadAttentionOptions options;
  int64_t head_dim;
  Tensor in_proj_weight;
  Tensor in_proj_bias;
  NonDynamicallyQuantizableLinear out_proj = nullptr;
};
EMBER_MODULE(MultiheadAttention);

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}
  EMBER_ARG(int64_t, d_model);
  EMBER_ARG(int64_t, nhead);
  EMBER_ARG(int64_t, dim_feedforward) = 2048;
  EMBER_ARG(double, dropout) = 0.1;
  // "relu" or "gelu".
  EMBER_ARG(std::string, activation) = "relu";
  EMBER_ARG(double, layer_norm_eps) = 1e-5;
  // Inputs (N, S, E) instead of (S, N, E).
  EMBER_ARG(bool, batch_first) = false;
  // Pre-norm (norm before attention and feed-forward) instead of post-norm.
  EMBER_ARG(bool, norm_first) = false;
  EMBER_ARG(bool, bias) = true;
};

// Self-attention and a feed-forward block, each with a residual connection and LayerNorm, as
// PyTorch's (submodules self_attn, linear1, dropout, linear2, norm1, norm2, dropout1, dropout2).
class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);

  // src (S, N, E) ((N, S, E) with batch_first; (S, E) unbatched); masks as MultiheadAttention's.
  Tensor forward(const Tensor& src, const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {}, bool is_causal = false);
  void pretty_print(std::ostream& out) const override;

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn = nullptr;
  Linear linear1 = nullptr;
  Dropout dropout = nullptr;
  Linear linear2 = nullptr;
  LayerNorm norm1 = nullptr;
  LayerNorm norm2 = nullptr;
  Dropout dropout1 = nullptr;
  Dropout dropout2 = nullptr;

 private:
  Tensor activate(const Tensor& x) const;
};
EMBER_MODULE(TransformerEncoderLayer);

}  // namespace ember::nn
