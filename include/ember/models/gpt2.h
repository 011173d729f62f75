// GPT-2 (Radford et al. 2019) as a user writes it with ember's nn: token and position
// embeddings, pre-LayerNorm blocks of causal self-attention (scaled_dot_product_attention) and a
// tanh-GELU MLP, a final LayerNorm, and an output projection tied to the token embedding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn.h"

namespace ember::models {

struct GPT2Config {
  int64_t vocab_size = 50304;  // GPT-2's 50257 tokens padded to a multiple of 64
  int64_t context = 1024;      // the longest sequence (block size)
  int64_t n_layer = 12;
  int64_t n_head = 12;
  int64_t n_embd = 768;
  double dropout = 0.0;  // on embeddings, attention weights, residual branches
  bool bias = true;      // biases in the Linear layers and LayerNorms
};

// GPT-2 small: 12 layers, 12 heads, d = 768, context 1024, vocabulary 50304 (~124 M parameters).
GPT2Config gpt2_config();
// A few-thousand-parameter relative for tests and CPU training: byte-level vocabulary (256),
// 2 layers, 4 heads, d = 64, context 64.
GPT2Config gpt2_tiny_config();

// x (B, T, C) -> (B, T, C): multi-head causal self-attention.
class CausalSelfAttentionImpl : public nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GPT2Config& config);
  Tensor forward(const Tensor& x);

  GPT2Config config;
  nn::Linear c_attn{nullptr};  // (C) -> (3C): q, k, v
  nn::Linear c_proj{nullptr};
  nn::Dropout resid_dropout{nullptr};
};
EMBER_MODULE(CausalSelfAttention);

// x (B, T, C) -> (B, T, C): Linear(C, 4C), tanh-GELU, Linear(4C, C), dropout.
class GPT2MLPImpl : public nn::Module {
 public:
  explicit GPT2MLPImpl(const GPT2Config& config);
  Tensor forward(const Tensor& x);

  nn::Linear c_fc{nullptr};
  nn::Linear c_proj{nullptr};
  nn::Dropout dropout{nullptr};
};
EMBER_MODULE(GPT2MLP);

// x + attn(ln_1(x)), then x + mlp(ln_2(x)).
class GPT2BlockImpl : public nn::Module {
 public:
  explicit GPT2BlockImpl(const GPT2Config& config);
  Tensor forward(const Tensor& x);

  nn::LayerNorm ln_1{nullptr};
  CausalSelfAttention attn{nullptr};
  nn::LayerNorm ln_2{nullptr};
  GPT2MLP mlp{nullptr};
};
EMBER_MODULE(GPT2Block);

// Parameter names follow nanoGPT's (wte.weight, h.0.attn.c_attn.weight, ...) without its
// "transformer." prefix; lm_head shares wte.weight and is not stored separately. Weights start
// as GPT-2's: N(0, 0.02), the residual projections N(0, 0.02 / sqrt(2 n_layer)), biases zero.
class GPT2Impl : public nn::Module {
 public:
  explicit GPT2Impl(const GPT2Config& config = {});
  // idx (B, T) int64 token ids in [0, vocab_size), T <= context -> logits (B, T, vocab_size).
  Tensor forward(const Tensor& idx);
  // Mean cross-entropy of forward(idx) against targets (B, T) int64.
  Tensor loss(const Tensor& idx, const Tensor& targets);
  // Appends max_new_tokens sampled tokens to idx (B, T0): softmax(logits / temperature),
  // restricted to the top_k most likely (top_k <= 0: all); temperature 0 picks the argmax.
  // Runs without gradients in evaluation mode, and restores the training mode after.
  Tensor generate(const Tensor& idx, int64_t max_new_tokens, double temperature = 1.0,
                  int64_t top_k = 0, Generator* generator = nullptr);
  int64_t num_parameters() const;

  GPT2Config config;
  nn::Embedding wte{nullptr};  // (vocab_size, n_embd), also the output projection
  nn::Embedding wpe{nullptr};  // (context, n_embd)
  nn::Dropout drop{nullptr};
  nn::ModuleList h{nullptr};
  std::vector<GPT2Block> blocks;  // the modules of h, typed
  nn::LayerNorm ln_f{nullptr};
};
EMBER_MODULE(GPT2);

}  // namespace ember::models
