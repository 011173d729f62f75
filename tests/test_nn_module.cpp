// nn::Module: registration, traversal order, modes, devices/dtypes, gradients, state dicts,
// printing; and Linear as the first layer.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/ember.h"

using namespace ember;

namespace {

class BlockImpl : public nn::Module {
 public:
  BlockImpl() : nn::Module("Block") {
    fc = register_module("fc", nn::Linear(3, 2));
    scale = register_parameter("scale", ones({2}));
    count = register_buffer("count", zeros({1}, TensorOptions().dtype(kInt64)));
    scratch = register_buffer("scratch", zeros({2}), /*persistent=*/false);
  }
  Tensor forward(const Tensor& x) { return fc->forward(x) * scale; }

  nn::Linear fc{nullptr};
  Tensor scale, count, scratch;
};
EMBER_MODULE(Block);

class NetImpl : public nn::Module {
 public:
  NetImpl() : nn::Module("Net") {
    a = register_module("a", Block());
    b = register_module("b", Block());
    w = register_parameter("w", randn({2}));
  }
  Tensor forward(const Tensor& x) {
    return b->forward(a->forward(x).matmul(ones({2, 3}, x.options()))) + w;
  }

  Block a{nullptr}, b{nullptr};
  Tensor w;
};
EMBER_MODULE(Net);

std::vector<std::string> keys(const nn::NamedTensors& d) { return d.keys(); }

}  // namespace

TEST(NnModule, TraversalFollowsPyTorchOrder) {
  Net net;
  EXPECT_EQ(keys(net->named_parameters()),
            (std::vector<std::string>{"w", "a.scale", "a.fc.weight", "a.fc.bias", "b.scale",
                                      "b.fc.weight", "b.fc.bias"}));
  EXPECT_EQ(keys(net->named_parameters(false)), (std::vector<std::string>{"w"}));
  EXPECT_EQ(keys(net->named_buffers()),
            (std::vector<std::string>{"a.count", "a.scratch", "b.count", "b.scratch"}));
  // state_dict: each module's parameters then its persistent buffers, then its children.
  EXPECT_EQ(keys(net->state_dict()),
            (std::vector<std::string>{"w", "a.scale", "a.count", "a.fc.weight", "a.fc.bias",
                                      "b.scale", "b.count", "b.fc.weight", "b.fc.bias"}));
  EXPECT_EQ(net->named_modules().keys(), (std::vector<std::string>{"", "a", "a.fc", "b", "b.fc"}));
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->parameters().size(), 7u);
  for (const Tensor& p : net->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  for (const Tensor& b : net->buffers()) EXPECT_FALSE(b.requires_grad());
}

TEST(NnModule, RegistrationErrors) {
  nn::Module m("M");
  m.register_parameter("x", zeros({1}));
  EXPECT_THROW(m.register_buffer("x", zeros({1})), ValueError);
  EXPECT_THROW(m.register_parameter("a.b", zeros({1})), ValueError);
  EXPECT_THROW(m.register_parameter("i", zeros({1}, TensorOptions().dtype(kInt64))), TypeError);
  // A parameter made from a computed tensor is a fresh leaf.
  Tensor src = randn({2}).requires_grad_();
  Tensor p = m.register_parameter("p", src * 2);
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
  // An undefined parameter is registered as absent (bias=None).
  m.register_parameter("none", Tensor());
  EXPECT_EQ(keys(m.named_parameters()), (std::vector<std::string>{"x", "p"}));
}

TEST(NnModule, TrainEvalRecurses) {
  Net net;
  EXPECT_TRUE(net->is_training());
  net->eval();
  for (auto& m : net->modules()) EXPECT_FALSE(m->is_training());
  net->train();
  for (auto& m : net->modules()) EXPECT_TRUE(m->is_training());
}

TEST(NnModule, ToDtypeKeepsHandlesAndIntegerBuffers) {
  Net net;
  Tensor w = net->a->fc->weight;  // a handle held outside, as an optimizer would
  std::vector<double> before = w.to(kFloat64).to_vector<double>();
  net->to(kFloat64);
  EXPECT_EQ(w.dtype(), kFloat64);
  EXPECT_EQ(net->a->fc->weight.dtype(), kFloat64);
  EXPECT_EQ(w.to_vector<double>(), before);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_EQ(net->a->count.dtype(), kInt64);  // integer buffers keep their dtype
  EXPECT_THROW(net->to(kInt32), TypeError);
  // Training still works after the move: the gradient lands in the same handle.
  Tensor loss = net->forward(randn({4, 3}, TensorOptions().dtype(kFloat64))).sum();
  loss.backward();
  EXPECT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat64);
}

TEST(NnModule, ZeroGrad) {
  Net net;
  net->forward(randn({4, 3})).sum().backward();
  for (const Tensor& p : net->parameters()) ASSERT_TRUE(p.grad().defined());
  net->zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : net->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().abs().sum().item<float>(), 0.0f);
  }
  net->zero_grad();
  for (const Tensor& p : net->parameters()) EXPECT_FALSE(p.grad().defined());
}

TEST(NnModule, StateDictRoundTripAndErrors) {
  Net a, b;
  b->load_state_dict(a->state_dict());
  for (const auto& [name, t] : a->state_dict()) {
    EXPECT_TRUE(equal(t, b->state_dict()[name])) << name;
  }
  // The state dict shares storage with the module.
  Tensor w = a->state_dict()["w"];
  EXPECT_TRUE(w.is_same_storage(a->w));

  nn::StateDict sd = a->state_dict();
  sd.erase("a.fc.bias");
  sd.insert("extra", zeros({1}));
  try {
    b->load_state_dict(sd);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("Error(s) in loading state_dict for Net"), std::string::npos) << m;
    EXPECT_NE(m.find("Missing key(s) in state_dict: \"a.fc.bias\""), std::string::npos) << m;
    EXPECT_NE(m.find("Unexpected key(s) in state_dict: \"extra\""), std::string::npos) << m;
  }
  b->load_state_dict(sd, /*strict=*/false);  // non-strict: missing/unexpected are fine

  nn::StateDict bad = a->state_dict();
  bad["w"] = zeros({3});
  try {
    b->load_state_dict(bad, /*strict=*/false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("size mismatch for w: copying a param with shape [3] "
                                         "from checkpoint, the shape in current model is [2]"),
              std::string::npos)
        << e.what();
  }
}

TEST(NnModule, Printing) {
  nn::Linear l(784, 10);
  std::ostringstream s;
  s << l;
  EXPECT_EQ(s.str(), "Linear(in_features=784, out_features=10, bias=True)");
  Net net;
  std::ostringstream t;
  t << net;
  EXPECT_EQ(t.str(),
            "Net(\n"
            "  (a): Block(\n"
            "    (fc): Linear(in_features=3, out_features=2, bias=True)\n"
            "  )\n"
            "  (b): Block(\n"
            "    (fc): Linear(in_features=3, out_features=2, bias=True)\n"
            "  )\n"
            ")");
}

TEST(NnLinear, ForwardInitAndShapeError) {
  manual_seed(0);
  nn::Linear l(nn::LinearOptions(4, 3).bias(false));
  EXPECT_FALSE(l->bias.defined());
  EXPECT_EQ(l->parameters().size(), 1u);
  Tensor x = randn({5, 4});
  EXPECT_TRUE(allclose(l(x), x.matmul(l->weight.t())));
  // PyTorch's default initialisation: uniform on +-1/sqrt(in_features).
  nn::Linear big(400, 300);
  const double bound = 1.0 / 20.0;
  EXPECT_LE(big->weight.abs().max().item<float>(), bound);
  EXPECT_GT(big->weight.abs().max().item<float>(), 0.95 * bound);
  EXPECT_LE(big->bias.abs().max().item<float>(), bound);
  nn::Linear fc(784, 10);
  try {
    fc(randn({32, 100}));
    FAIL() << "expected an error";
  } catch (const ValueError& e) {
    EXPECT_STREQ(e.what(),
                 "[Linear(in_features=784, out_features=10)] input of shape [32, 100] has 100 "
                 "features, expected 784");
  }
}
