// nn layers: containers (Sequential, ModuleList, ModuleDict), activation modules, loss modules on
// hand-computed values, MultiheadAttention and TransformerEncoderLayer.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = ember::nn::functional;

namespace {

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

template <class M>
std::string repr(const nn::ModuleHolder<M>& m) {
  return repr(static_cast<const nn::Module&>(*m));
}

std::vector<std::string> keys(const nn::StateDict& d) {
  std::vector<std::string> k;
  for (const auto& [name, t] : d) k.push_back(name);
  return k;
}

double item(const Tensor& t) { return t.to(kFloat64).item<double>(); }

// ---- containers ---------------------------------------------------------------------------------

TEST(Sequential, ChainsForwardAndNamesChildrenByIndex) {
  manual_seed(0);
  nn::Sequential net(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  EXPECT_EQ(net->size(), 3u);
  EXPECT_EQ(keys(net->state_dict()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  Tensor x = randn({5, 4});
  auto l0 = net->ptr<nn::LinearImpl>(0);
  auto l2 = net->ptr<nn::Linear>(2);
  Tensor want = l2->forward(relu(l0->forward(x)));
  expect_close(net->forward(x), want);
  expect_close(net(x), want);
  EXPECT_EQ(&net->at<nn::LinearImpl>(-1), l2.get());
  EXPECT_EQ(net[1]->name(), "ReLU");
  EXPECT_EQ(net->parameters().size(), 4u);
  int count = 0;
  for (const auto& m : *net) count += m != nullptr;
  EXPECT_EQ(count, 3);
  expect_error<TypeError>([&] { net->ptr<nn::LinearImpl>(1); }, "is not of the requested type");
  expect_error<IndexError>([&] { (void)(*net)[3]; }, "index 3 is out of range");
}

TEST(Sequential, PushBackByNameSharedPointersAndPrinting) {
  nn::Sequential net;
  EXPECT_EQ(repr(net), "Sequential()");
  expect_close(net->forward(ones({2})), ones({2}));  // empty: the identity
  net->push_back(std::make_shared<nn::LinearImpl>(2, 3));
  net->push_back("act", nn::GELU());
  net->push_back(nn::Softmax(1));
  EXPECT_EQ(keys(net->state_dict()), (std::vector<std::string>{"0.weight", "0.bias"}));
  EXPECT_EQ(repr(net),
            "Sequential(\n"
            "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
            "  (act): GELU(approximate='none')\n"
            "  (2): Softmax(dim=1)\n"
            ")");
  Tensor y = net->forward(randn({4, 2}));
  expect_close(y.sum({1}), ones({4}));
  // Parameters are shared with the holders pushed in.
  nn::Linear shared(2, 2);
  nn::Sequential a(shared), b(shared);
  EXPECT_TRUE(a->parameters()[0].is_same(b->parameters()[0]));
}

TEST(ModuleList, HoldsModulesInOrder) {
  nn::ModuleList list(nn::Linear(2, 2), nn::ReLU());
  list->push_back(nn::Linear(2, 1));
  nn::ModuleList more;
  more->extend({nn::Tanh(), nn::Linear(1, 1, false)});
  list->extend(*more);
  EXPECT_EQ(list->size(), 5u);
  EXPECT_EQ(keys(list->state_dict()),
            (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias", "4.weight"}));
  EXPECT_EQ((*list)[3]->name(), "Tanh");
  EXPECT_EQ(list->ptr<nn::LinearImpl>(4)->options.bias(), false);
  Tensor x = randn({3, 2});
  for (const auto& m : *list) {
    if (auto lin = std::dynamic_pointer_cast<nn::LinearImpl>(m)) x = lin->forward(x);
  }
  EXPECT_EQ(x.sizes(), (Shape{3, 1}));
  EXPECT_EQ(repr(nn::ModuleList(nn::ReLU(), nn::Sigmoid())),
            "ModuleList(\n  (0): ReLU()\n  (1): Sigmoid()\n)");
}

TEST(ModuleDict, NamesUpdateAndLookup) {
  nn::ModuleDict heads({{"cls", nn::Linear(4, 3)}, {"act", nn::ReLU()}});
  EXPECT_TRUE(heads->contains("cls"));
  EXPECT_FALSE(heads->contains("box"));
  heads->update({{"box", nn::Linear(4, 2)}, {"cls", nn::Linear(4, 5)}});
  EXPECT_EQ(heads->keys(), (std::vector<std::string>{"cls", "act", "box"}));
  EXPECT_EQ(heads->ptr<nn::LinearImpl>("cls")->options.out_features(), 5);
  EXPECT_EQ((*heads)["act"]->name(), "ReLU");
  EXPECT_EQ(keys(heads->state_dict()),
            (std::vector<std::string>{"cls.weight", "cls.bias", "box.weight", "box.bias"}));
  expect_error<IndexError>([&] { (void)(*heads)["nope"]; }, "no module named 'nope'");
  EXPECT_EQ(repr(heads),
            "ModuleDict(\n"
            "  (cls): Linear(in_features=4, out_features=5, bias=True)\n"
            "  (act): ReLU()\n"
            "  (box): Linear(in_features=4, out_features=2, bias=True)\n"
            ")");
}

// ---- activations --------------------------------------------------------------------------------

TEST(Activations, ModulesMatchFunctionsAndPrintAsPyTorch) {
  Tensor x = tensor({-8.0, -1.5, -0.2, 0.0, 0.3, 2.0, 7.0});
  expect_close(nn::ReLU()(x), tensor({0.0, 0.0, 0.0, 0.0, 0.3, 2.0, 7.0}));
  expect_close(nn::ReLU6()(x), tensor({0.0, 0.0, 0.0, 0.0, 0.3, 2.0, 6.0}));
  expect_close(nn::Hardtanh(nn::HardtanhOptions().min_val(-1).max_val(2))(x),
               tensor({-1.0, -1.0, -0.2, 0.0, 0.3, 2.0, 2.0}));
  expect_close(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.1))(x), leaky_relu(x, 0.1));
  expect_close(nn::GELU(nn::GELUOptions().approximate("tanh"))(x), gelu(x, "tanh"));
  expect_close(nn::SiLU()(x), x * sigmoid(x));
  expect_close(nn::Mish()(x), x * tanh(log1p(exp(x))));
  expect_close(nn::Softplus(nn::SoftplusOptions().beta(2))(x), softplus(x, 2));
  expect_close(nn::ELU()(x), elu(x));
  expect_close(nn::Sigmoid()(x), sigmoid(x));
  expect_close(nn::Tanh()(x), tanh(x));
  Tensor m = randn({2, 3});
  expect_close(nn::Softmax(0)(m), softmax(m, 0));
  expect_close(nn::LogSoftmax(1)(m), log_softmax(m, 1));

  EXPECT_EQ(repr(nn::ReLU()), "ReLU()");
  EXPECT_EQ(repr(nn::ReLU6()), "ReLU6()");
  EXPECT_EQ(repr(nn::GELU()), "GELU(approximate='none')");
  EXPECT_EQ(repr(nn::SiLU()), "SiLU()");
  EXPECT_EQ(repr(nn::Softplus()), "Softplus(beta=1.0, threshold=20.0)");
  EXPECT_EQ(repr(nn::ELU(nn::ELUOptions().alpha(0.5))), "ELU(alpha=0.5)");
  EXPECT_EQ(repr(nn::LeakyReLU()), "LeakyReLU(negative_slope=0.01)");
  EXPECT_EQ(repr(nn::Hardtanh()), "Hardtanh(min_val=-1.0, max_val=1.0)");
  EXPECT_EQ(repr(nn::Softmax(1)), "Softmax(dim=1)");
  EXPECT_EQ(repr(nn::LogSoftmax(-1)), "LogSoftmax(dim=-1)");
  expect_error<ValueError>([] { nn::GELU(nn::GELUOptions().approximate("fast")); }, "approximate");
}

TEST(Activations, AttentionRejectsCausalWithMask) {
  Tensor q = randn({2, 3, 4});
  expect_error<ValueError>(
      [&] {
        F::scaled_dot_product_attention(q, q, q, ones({3, 3}), 0.0, true);
      },
      "Explicit attn_mask should not be set when is_causal=True");
  // Causal: the first query sees only the first key, so it returns the first value.
  Tensor v = randn({2, 3, 4});
  Tensor out = F::scaled_dot_product_attention(q, q, v, {}, 0.0, true);
  expect_close(out.select(1, 0), v.select(1, 0));
}

TEST(Activations, AttentionDropout) {
  Tensor q = randn({2, 3, 4}), v = randn({2, 3, 4});
  expect_close(F::scaled_dot_product_attention(q, q, v, {}, 1.0), zeros({2, 3, 4}));
  manual_seed(9);
  Tensor a = F::scaled_dot_product_attention(q, q, v, {}, 0.5);
  manual_seed(9);
  Tensor b = F::scaled_dot_product_attention(q, q, v, {}, 0.5);
  expect_close(a, b, 0);
  EXPECT_FALSE(allclose(a, F::scaled_dot_product_attention(q, q, v)));
  expect_error<ValueError>([&] { F::scaled_dot_product_attention(q, q, v, {}, 1.5); },
                           "dropout probability has to be between 0 and 1");
}

// ---- losses -------------------------------------------------------------------------------------

double lse(std::initializer_list<double> v) {
  double s = 0;
  for (double x : v) s += std::exp(x);
  return std::log(s);
}

TEST(Losses, CrossEntropyByHand) {
  Tensor logits = tensor({1.0, 2.0, 3.0, 1.0, 1.0, 1.0}, {2, 3});
  Tensor target = tensor({int64_t(2), int64_t(0)});
  const double l0 = lse({1, 2, 3}) - 3, l1 = lse({1, 1, 1}) - 1;
  EXPECT_NEAR(item(nn::CrossEntropyLoss()(logits, target)), (l0 + l1) / 2, 1e-6);
  EXPECT_NEAR(item(F::cross_entropy(logits, target)), (l0 + l1) / 2, 1e-6);
  // Weighted mean divides by the summed weights of the targets.
  nn::CrossEntropyLoss weighted(nn::CrossEntropyLossOptions().weight(tensor({1.0, 2.0, 3.0})));
  EXPECT_NEAR(item(weighted(logits, target)), (3 * l0 + 1 * l1) / 4, 1e-6);
  EXPECT_EQ(keys(weighted->state_dict()), (std::vector<std::string>{"weight"}));
  // ignore_index rows add nothing and count nothing.
  Tensor ignored = tensor({int64_t(2), int64_t(-100)});
  EXPECT_NEAR(item(F::cross_entropy(logits, ignored)), l0, 1e-6);
  EXPECT_NEAR(
      item(F::cross_entropy(logits, ignored, F::CrossEntropyFuncOptions().reduction("sum"))), l0,
      1e-6);
  // Label smoothing: (1 - e) nll + e / C * sum_c -log p_c.
  const double e = 0.1;
  const double s0 = 3 * lse({1, 2, 3}) - 6, s1 = 3 * lse({1, 1, 1}) - 3;
  Tensor none = F::cross_entropy(logits, target,
                                 F::CrossEntropyFuncOptions().label_smoothing(e).reduction("none"));
  EXPECT_NEAR(item(none.select(0, 0)), (1 - e) * l0 + e / 3 * s0, 1e-6);
  EXPECT_NEAR(item(none.select(0, 1)), (1 - e) * l1 + e / 3 * s1, 1e-6);
  // Probability targets equal to one-hot give the same loss as indices.
  Tensor probs = tensor({0.0, 0.0, 1.0, 1.0, 0.0, 0.0}, {2, 3});
  EXPECT_NEAR(item(F::cross_entropy(logits, probs)), (l0 + l1) / 2, 1e-6);
  // Gradient: softmax - one-hot, over the batch.
  Tensor x = logits.clone().requires_grad_(true);
  F::cross_entropy(x, target).backward();
  Tensor onehot = one_hot(target, 3).to(kFloat32);
  expect_close(x.grad(), (softmax(logits, 1) - onehot) / 2);
}

TEST(Losses, CrossEntropyErrorsInPyTorchWords) {
  Tensor logits = randn({4, 3});
  expect_error<ValueError>(
      [&] {
        F::cross_entropy(logits, tensor({int64_t(0), int64_t(1), int64_t(2)}));
      },
      "Expected input batch_size (4) to match target batch_size (3).");
  expect_error<IndexError>(
      [&] {
        F::cross_entropy(logits, tensor({int64_t(0), int64_t(5), int64_t(1), int64_t(2)}));
      },
      "Target 5 is out of bounds.");
  expect_error<ValueError>(
      [&] {
        F::cross_entropy(logits, zeros({4}, TensorOptions(kInt64)),
                         F::CrossEntropyFuncOptions().reduction("avg"));
      },
      "avg is not a valid value for reduction");
  expect_error<ValueError>(
      [&] {
        F::cross_entropy(logits, zeros({4}, TensorOptions(kInt64)),
                         F::CrossEntropyFuncOptions().weight(ones({2})));
      },
      "weight tensor should be defined either for all 3 classes");
}

TEST(Losses, NllAndRegressionLossesByHand) {
  Tensor logp = log(tensor({0.2, 0.8, 0.5, 0.5}, {2, 2}));
  Tensor t = tensor({int64_t(1), int64_t(0)});
  EXPECT_NEAR(item(nn::NLLLoss()(logp, t)), -(std::log(0.8) + std::log(0.5)) / 2, 1e-6);

  Tensor a = tensor({1.0, 2.0, 3.0}), b = tensor({1.0, 1.0, 1.0});
  EXPECT_NEAR(item(nn::MSELoss()(a, b)), 5.0 / 3, 1e-6);
  EXPECT_NEAR(item(nn::L1Loss(nn::L1LossOptions().reduction("sum"))(a, b)), 3.0, 1e-6);
  Tensor d = tensor({0.5, 2.0}), z = zeros({2});
  EXPECT_NEAR(item(nn::SmoothL1Loss()(d, z)), (0.125 + 1.5) / 2, 1e-6);
  EXPECT_NEAR(item(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.0))(d, z)), 1.25, 1e-6);
  EXPECT_NEAR(item(nn::HuberLoss(nn::HuberLossOptions().delta(2.0))(tensor({0.5, 3.0}), z)),
              (0.125 + 2 * (3 - 1)) / 2, 1e-6);

  Tensor p = tensor({0.8, 0.3}), y = tensor({1.0, 0.0});
  EXPECT_NEAR(item(nn::BCELoss()(p, y)), -(std::log(0.8) + std::log(0.7)) / 2, 1e-6);
  // log(0) is clamped to -100.
  EXPECT_NEAR(item(F::binary_cross_entropy(tensor({0.0}), tensor({1.0}))), 100.0, 1e-4);
  nn::BCEWithLogitsLoss bce(nn::BCEWithLogitsLossOptions().pos_weight(tensor({3.0})));
  EXPECT_NEAR(item(bce(tensor({0.0, 0.0}), y)), (3 * std::log(2.0) + std::log(2.0)) / 2, 1e-6);
  EXPECT_EQ(keys(bce->state_dict()), (std::vector<std::string>{"pos_weight"}));

  Tensor q = tensor({0.25, 0.75, 0.5, 0.5}, {2, 2});
  Tensor lp = log(tensor({0.5, 0.5, 0.5, 0.5}, {2, 2}));
  const double kl = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
  EXPECT_NEAR(item(nn::KLDivLoss(nn::KLDivLossOptions().reduction("batchmean"))(lp, q)), kl / 2,
              1e-6);
  EXPECT_NEAR(item(F::kl_div(lp, log(q), F::KLDivFuncOptions().reduction("sum").log_target(true))),
              kl, 1e-6);
  EXPECT_EQ(repr(nn::CrossEntropyLoss()), "CrossEntropyLoss()");
}

// ---- MultiheadAttention -------------------------------------------------------------------------

TEST(MultiheadAttention, ParametersAsPyTorch) {
  manual_seed(1);
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(keys(mha->state_dict()),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                      "out_proj.bias"}));
  EXPECT_EQ(mha->in_proj_weight.sizes(), (Shape{24, 8}));
  EXPECT_EQ(item(mha->in_proj_bias.abs().sum()), 0.0);
  EXPECT_EQ(item(mha->out_proj->bias.abs().sum()), 0.0);
  EXPECT_LE(item(mha->in_proj_weight.abs().max()), std::sqrt(6.0 / (8 + 24)));
  EXPECT_EQ(repr(mha),
            "MultiheadAttention(\n"
            "  (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n)");
  expect_error<ValueError>([] { nn::MultiheadAttention(10, 3); },
                           "embed_dim must be divisible by num_heads");
  nn::MultiheadAttention nob(nn::MultiheadAttentionOptions(4, 1).bias(false));
  EXPECT_EQ(keys(nob->state_dict()),
            (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
}

TEST(MultiheadAttention, ShapesWeightsAndOneHeadByHand) {
  manual_seed(2);
  nn::MultiheadAttention mha(6, 3);
  Tensor q = randn({4, 2, 6}), kv = randn({5, 2, 6});  // (L, N, E), (S, N, E)
  auto [out, w] = mha->forward(q, kv, kv);
  EXPECT_EQ(out.sizes(), (Shape{4, 2, 6}));
  EXPECT_EQ(w.sizes(), (Shape{2, 4, 5}));
  expect_close(w.sum({-1}), ones({2, 4}));
  auto [out2, wh] = mha->forward(q, kv, kv, {}, true, {}, false);
  EXPECT_EQ(wh.sizes(), (Shape{2, 3, 4, 5}));
  expect_close(wh.mean({1}), w);
  auto [out3, none] = mha->forward(q, kv, kv, {}, false);
  EXPECT_FALSE(none.defined());
  expect_close(out3, out);

  // batch_first and unbatched layouts give the same numbers.
  nn::MultiheadAttention bf(nn::MultiheadAttentionOptions(6, 3).batch_first(true));
  bf->load_state_dict(mha->state_dict());
  auto [outb, wb] = bf->forward(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
  expect_close(outb.transpose(0, 1), out);
  auto [outu, wu] = mha->forward(q.select(1, 1), kv.select(1, 1), kv.select(1, 1));
  expect_close(outu, out.select(1, 1));
  expect_close(wu, w.select(0, 1));

  // One head: out_proj(softmax(q Wq (k Wk)^T / sqrt(E)) v Wv).
  nn::MultiheadAttention one(4, 1);
  Tensor x = randn({3, 1, 4});
  auto [o1, w1] = one->forward(x, x, x);
  Tensor W = one->in_proj_weight, B = one->in_proj_bias;
  Tensor x2 = x.select(1, 0);
  Tensor qq = linear(x2, W.narrow(0, 0, 4), B.narrow(0, 0, 4));
  Tensor kk = linear(x2, W.narrow(0, 4, 4), B.narrow(0, 4, 4));
  Tensor vv = linear(x2, W.narrow(0, 8, 4), B.narrow(0, 8, 4));
  Tensor attn = softmax(qq.matmul(kk.t()) / 2.0, -1);
  expect_close(w1.select(0, 0), attn);
  expect_close(o1.select(1, 0), one->out_proj->forward(attn.matmul(vv)));
}

TEST(MultiheadAttention, MasksHideKeys) {
  manual_seed(3);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).batch_first(true));
  Tensor x = randn({2, 5, 4});
  // key_padding_mask: true hides a key (the last two of batch 0, the first of batch 1).
  Tensor pad = tensor({false, false, false, true, true, true, false, false, false, false}, {2, 5});
  auto [out, w] = mha->forward(x, x, x, pad);
  expect_close(w.select(0, 0).narrow(1, 3, 2), zeros({5, 2}));
  expect_close(w.select(0, 1).narrow(1, 0, 1), zeros({5, 1}));
  expect_close(w.sum({-1}), ones({2, 5}));
  // Causal: future positions get zero weight, and the outputs of a prefix do not depend on
  // what follows it.
  auto [oc, wc] = mha->forward(x, x, x, {}, true, {}, true, /*is_causal=*/true);
  expect_close(triu(wc, 1), zeros({2, 5, 5}));
  expect_close(wc.sum({-1}), ones({2, 5}));
  Tensor x3 = x.narrow(1, 0, 3);
  auto [op, wp] = mha->forward(x3, x3, x3, {}, true, {}, true, true);
  expect_close(op, oc.narrow(1, 0, 3));
  // The same with an explicit boolean mask (true = hidden) and an additive float mask.
  Tensor future = triu(ones({5, 5}, TensorOptions(kBool)), 1);
  auto [ob, wb] = mha->forward(x, x, x, {}, true, future);
  expect_close(ob, oc);
  Tensor additive = masked_fill(zeros({5, 5}), future, -INFINITY);
  auto [of, wf] = mha->forward(x, x, x, {}, false, additive);
  expect_close(of, oc);
  expect_error<ValueError>(
      [&] {
        mha->forward(x, x, x, {}, true, ones({4, 5}));
      },
      "The shape of the 2D attn_mask is [4, 5], but should be (5, 5).");
  expect_error<ValueError>(
      [&] {
        mha->forward(randn({2, 5, 3}), x, x);
      },
      "was expecting embedding dimension of 4");
}

TEST(MultiheadAttention, BackwardReachesEveryParameter) {
  manual_seed(4);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(4, 2).dropout(0.5));
  Tensor x = randn({3, 2, 4});
  auto [out, w] = mha->forward(x, x, x);
  out.pow(2).sum().backward();
  for (const auto& [name, p] : mha->named_parameters()) {
    ASSERT_TRUE(p.grad().defined()) << name;
    EXPECT_GT(item(p.grad().abs().sum()), 0.0) << name;
  }
  // Evaluation mode turns attention dropout off: two runs agree.
  mha->eval();
  auto [e1, w1] = mha->forward(x, x, x);
  auto [e2, w2] = mha->forward(x, x, x);
  expect_close(e1, e2, 0);
}

// ---- TransformerEncoderLayer --------------------------------------------------------------------

TEST(TransformerEncoderLayer, NamesShapesAndPrinting) {
  manual_seed(5);
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  EXPECT_EQ(keys(layer->state_dict()),
            (std::vector<std::string>{
                "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                "self_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
                "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias"}));
  EXPECT_EQ(repr(layer),
            "TransformerEncoderLayer(\n"
            "  (self_attn): MultiheadAttention(\n"
            "    (out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)\n"
            "  )\n"
            "  (linear1): Linear(in_features=8, out_features=16, bias=True)\n"
            "  (dropout): Dropout(p=0.1, inplace=False)\n"
            "  (linear2): Linear(in_features=16, out_features=8, bias=True)\n"
            "  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True)\n"
            "  (dropout1): Dropout(p=0.1, inplace=False)\n"
            "  (dropout2): Dropout(p=0.1, inplace=False)\n"
            ")");
  layer->eval();
  Tensor x = randn({5, 3, 8});  // (S, N, E)
  Tensor y = layer->forward(x);
  EXPECT_EQ(y.sizes(), (Shape{5, 3, 8}));
  nn::TransformerEncoderLayer bf(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).batch_first(true));
  bf->load_state_dict(layer->state_dict());
  bf->eval();
  expect_close(bf->forward(x.transpose(0, 1)).transpose(0, 1), y);
  expect_error<ValueError>(
      [] {
        nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).activation("tanh"));
      },
      "activation should be relu/gelu, not tanh");
}

TEST(TransformerEncoderLayer, PostNormAndPreNormByHand) {
  manual_seed(6);
  Tensor x = randn({4, 2, 8});
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(8, 4).dim_feedforward(12).activation("gelu").norm_first(
            norm_first));
    layer->eval();
    auto sa = [&](const Tensor& t) { return std::get<0>(layer->self_attn->forward(t, t, t)); };
    auto ff = [&](const Tensor& t) {
      return layer->linear2->forward(gelu(layer->linear1->forward(t)));
    };
    Tensor want;
    if (norm_first) {
      Tensor h = x + sa(layer->norm1->forward(x));
      want = h + ff(layer->norm2->forward(h));
    } else {
      Tensor h = layer->norm1->forward(x + sa(x));
      want = layer->norm2->forward(h + ff(h));
    }
    expect_close(layer->forward(x), want);
  }
}

TEST(TransformerEncoderLayer, CausalMaskKeepsPrefixesIndependent) {
  manual_seed(7);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).batch_first(true));
  layer->eval();
  Tensor x = randn({2, 6, 8});
  Tensor full = layer->forward(x, {}, {}, /*is_causal=*/true);
  Tensor prefix = layer->forward(x.narrow(1, 0, 4), {}, {}, true);
  expect_close(prefix, full.narrow(1, 0, 4));
  // Padding the last keys of a sequence leaves the outputs of the others unchanged.
  Tensor pad = zeros({2, 6}, TensorOptions(kBool));
  pad.narrow(1, 4, 2).fill_(true);
  Tensor padded = layer->forward(x, {}, pad);
  expect_close(padded.narrow(1, 0, 4), layer->forward(x.narrow(1, 0, 4)));
}

TEST(TransformerEncoderLayer, SgdStepsReduceTheLoss) {
  manual_seed(8);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(32).dropout(0.0));
  Tensor x = randn({6, 4, 8});
  Tensor target = randn({6, 4, 8});
  auto loss_now = [&] { return F::mse_loss(layer->forward(x), target); };
  const double first = item(loss_now());
  double last = first;
  for (int step = 0; step < 30; ++step) {
    layer->zero_grad();
    Tensor loss = loss_now();
    loss.backward();
    NoGradGuard g;
    for (Tensor& p : layer->parameters()) {
      ASSERT_TRUE(p.grad().defined());
      p.sub_(p.grad() * 0.1);
    }
    last = item(loss);
  }
  EXPECT_LT(last, 0.8 * first) << "first " << first << ", last " << last;
}

}  // namespace
