// GPT-2 built from ember's public nn modules (include/ember/models/gpt2.h).
#include "ember/models/gpt2.h"

#include <cmath>
#include <string>

#include "ember/error.h"
#include "ember/grad_mode.h"
#include "ember/ops.h"
#include "ember/random.h"

namespace ember::models {

namespace F = nn::functional;

GPT2Config gpt2_config() { return GPT2Config{}; }

GPT2Config gpt2_tiny_config() {
  GPT2Config c;
  c.vocab_size = 256;
  c.context = 64;
  c.n_layer = 2;
  c.n_head = 4;
  c.n_embd = 64;
  return c;
}

namespace {

void check_config(const GPT2Config& c) {
  if (c.vocab_size <= 0 || c.context <= 0 || c.n_layer <= 0 || c.n_head <= 0 || c.n_embd <= 0 ||
      c.n_embd % c.n_head != 0 || c.dropout < 0.0 || c.dropout >= 1.0) {
    throw ValueError(
        "[GPT2] bad configuration: vocab_size=" + std::to_string(c.vocab_size) +
        " context=" + std::to_string(c.context) + " n_layer=" + std::to_string(c.n_layer) +
        " n_head=" + std::to_string(c.n_head) + " n_embd=" + std::to_string(c.n_embd) +
        " (a multiple of n_head)" + " dropout=" + std::to_string(c.dropout) + " (in [0, 1))");
  }
}

nn::Linear make_linear(int64_t in, int64_t out, bool bias, double std) {
  nn::Linear l(nn::LinearOptions(in, out).bias(bias));
  nn::init::normal_(l->weight, 0.0, std);
  if (bias) nn::init::zeros_(l->bias);
  return l;
}

nn::LayerNorm make_layer_norm(int64_t n, bool bias) {
  return nn::LayerNorm(nn::LayerNormOptions({n}).elementwise_affine(true).bias(bias));
}

// One index per row of probs (B, V), drawn by inverting the row's cumulative distribution.
Tensor sample(const Tensor& probs, Generator* generator) {
  const int64_t B = probs.size(0), V = probs.size(1);
  Tensor p = probs.to(Device(kCPU)).to(kFloat64).contiguous();
  Tensor u = generator ? rand({B}, *generator, TensorOptions().dtype(kFloat64))
                       : rand({B}, TensorOptions().dtype(kFloat64));
  Tensor out = empty({B, 1}, TensorOptions().dtype(kInt64));
  const double* pp = p.data_ptr<double>();
  const double* up = u.data_ptr<double>();
  int64_t* op = out.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    double acc = 0.0;
    int64_t pick = V - 1;
    for (int64_t v = 0; v < V; ++v) {
      acc += pp[b * V + v];
      if (up[b] < acc) {
        pick = v;
        break;
      }
    }
    op[b] = pick;
  }
  return out.to(probs.device());
}

}  // namespace

// ---- attention ----------------------------------------------------------------------------------

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPT2Config& c)
    : nn::Module("CausalSelfAttention"), config(c) {
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  c_attn = register_module("c_attn", make_linear(c.n_embd, 3 * c.n_embd, c.bias, 0.02));
  c_proj = register_module("c_proj", make_linear(c.n_embd, c.n_embd, c.bias, proj_std));
  resid_dropout = register_module("resid_dropout", nn::Dropout(nn::DropoutOptions(c.dropout)));
}

Tensor CausalSelfAttentionImpl::forward(const Tensor& x) {
  const int64_t B = x.size(0), T = x.size(1), C = x.size(2);
  const int64_t H = config.n_head, D = C / H;
  TensorList qkv = c_attn(x).split(C, 2);  // 3 x (B, T, C)
  auto heads = [&](const Tensor& t) { return t.view({B, T, H, D}).transpose(1, 2); };  // (B,H,T,D)
  Tensor y = F::scaled_dot_product_attention(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), {},
                                             is_training() ? config.dropout : 0.0, true);
  y = y.transpose(1, 2).contiguous().view({B, T, C});
  return resid_dropout(c_proj(y));
}

// ---- MLP and block ------------------------------------------------------------------------------

GPT2MLPImpl::GPT2MLPImpl(const GPT2Config& c) : nn::Module("GPT2MLP") {
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  c_fc = register_module("c_fc", make_linear(c.n_embd, 4 * c.n_embd, c.bias, 0.02));
  c_proj = register_module("c_proj", make_linear(4 * c.n_embd, c.n_embd, c.bias, proj_std));
  dropout = register_module("dropout", nn::Dropout(nn::DropoutOptions(c.dropout)));
}

Tensor GPT2MLPImpl::forward(const Tensor& x) { return dropout(c_proj(F::gelu(c_fc(x), "tanh"))); }

GPT2BlockImpl::GPT2BlockImpl(const GPT2Config& c) : nn::Module("GPT2Block") {
  ln_1 = register_module("ln_1", make_layer_norm(c.n_embd, c.bias));
  attn = register_module("attn", CausalSelfAttention(c));
  ln_2 = register_module("ln_2", make_layer_norm(c.n_embd, c.bias));
  mlp = register_module("mlp", GPT2MLP(c));
}

Tensor GPT2BlockImpl::forward(const Tensor& x) {
  Tensor y = x + attn(ln_1(x));
  return y + mlp(ln_2(y));
}

// ---- the model ----------------------------------------------------------------------------------

GPT2Impl::GPT2Impl(const GPT2Config& c) : nn::Module("GPT2"), config(c) {
  check_config(c);
  wte = register_module("wte", nn::Embedding(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", nn::Embedding(c.context, c.n_embd));
  nn::init::normal_(wte->weight, 0.0, 0.02);
  nn::init::normal_(wpe->weight, 0.0, 0.02);
  drop = register_module("drop", nn::Dropout(nn::DropoutOptions(c.dropout)));
  h = register_module("h", nn::ModuleList());
  for (int64_t i = 0; i < c.n_layer; ++i) {
    blocks.emplace_back(c);
    h->push_back(blocks.back());
  }
  ln_f = register_module("ln_f", make_layer_norm(c.n_embd, c.bias));
}

Tensor GPT2Impl::forward(const Tensor& idx) {
  if (idx.dim() != 2 || idx.dtype() != kInt64) {
    throw ValueError("[GPT2] expected token ids (B, T) of dtype int64, got " +
                     std::to_string(idx.dim()) + " dim(s) of " +
                     std::string(dtype_name(idx.dtype())));
  }
  const int64_t T = idx.size(1);
  if (T > config.context) {
    throw ValueError("[GPT2] sequence length " + std::to_string(T) +
                     " is longer than the context " + std::to_string(config.context));
  }
  if (idx.numel() > 0) {
    const int64_t lo = idx.min().item<int64_t>(), hi = idx.max().item<int64_t>();
    if (lo < 0 || hi >= config.vocab_size) {
      throw IndexError("[GPT2] token id " + std::to_string(lo < 0 ? lo : hi) +
                       " is outside the vocabulary [0, " + std::to_string(config.vocab_size) + ")");
    }
  }
  Tensor pos = arange(T, TensorOptions().dtype(kInt64).device(idx.device()));
  Tensor x = drop(wte(idx) + wpe(pos));  // (B, T, C)
  for (auto& block : blocks) x = block(x);
  return linear(ln_f(x), wte->weight);  // (B, T, V): the tied output projection
}

Tensor GPT2Impl::loss(const Tensor& idx, const Tensor& targets) {
  Tensor logits = forward(idx);
  if (targets.sizes() != idx.sizes()) {
    throw ValueError("[GPT2] targets must have the shape of the token ids (B, T)");
  }
  return F::cross_entropy(logits.view({-1, config.vocab_size}), targets.reshape({-1}));
}

Tensor GPT2Impl::generate(const Tensor& idx, int64_t max_new_tokens, double temperature,
                          int64_t top_k, Generator* generator) {
  if (max_new_tokens < 0 || temperature < 0.0) {
    throw ValueError("[GPT2.generate] max_new_tokens and temperature must be >= 0");
  }
  const bool was_training = is_training();
  eval();
  NoGradGuard no_grad;
  Tensor out = idx;
  for (int64_t i = 0; i < max_new_tokens; ++i) {
    const int64_t T = out.size(1);
    Tensor window = T > config.context ? out.narrow(1, T - config.context, config.context) : out;
    Tensor logits = forward(window).select(1, -1).to(kFloat32);  // (B, V)
    Tensor next;
    if (temperature == 0.0) {
      next = logits.argmax(-1, true);
    } else {
      logits = logits / temperature;
      if (top_k > 0 && top_k < config.vocab_size) {
        Tensor kth = std::get<0>(topk(logits, top_k, -1)).narrow(1, top_k - 1, 1);  // (B, 1)
        logits = logits.masked_fill(logits < kth, -INFINITY);
      }
      next = sample(F::softmax(logits, -1), generator);
    }
    out = cat({out, next.to(kInt64)}, 1);
  }
  train(was_training);
  return out;
}

int64_t GPT2Impl::num_parameters() const {
  int64_t n = 0;
  for (const Tensor& p : parameters()) n += p.numel();
  return n;
}

}  // namespace ember::models
