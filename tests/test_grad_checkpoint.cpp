// utils::checkpoint (gradient checkpointing): gradients equal to running fn directly, random ops
// replayed, parameters captured by fn, several inputs and outputs, segments, and errors.
#include <gtest/gtest.h>

#include <cstring>

#include "ember/ember.h"

using namespace ember;

namespace {

void expect_identical(const Tensor& a, const Tensor& b, const char* what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(a.defined());
  ASSERT_TRUE(b.defined());
  ASSERT_EQ(a.sizes(), b.sizes());
  ASSERT_EQ(a.dtype(), b.dtype());
  Tensor ca = a.contiguous(), cb = b.contiguous();
  EXPECT_EQ(std::memcmp(ca.data_ptr(), cb.data_ptr(), ca.nbytes()), 0);
}

// A block with a random op (dropout-style mask from bernoulli, plus rand noise) and a parameter.
Tensor block(const Tensor& x, const Tensor& w) {
  Tensor h = x.matmul(w).tanh();
  Tensor mask = bernoulli(full_like(h, 0.5)).mul(2.0);
  return h * mask + rand_like(h) * 0.1;
}

}  // namespace

TEST(GradCheckpoint, MatchesPlainBackwardWithRandomOps) {
  manual_seed(0);
  Tensor x = randn({4, 6}).requires_grad_();
  Tensor w = randn({6, 6}).requires_grad_();

  manual_seed(11);
  Tensor plain = block(x, w);
  plain.pow(2).sum().backward();
  Tensor gx = x.grad().clone(), gw = w.grad().clone();
  Tensor after_plain = rand({5});
  x.mutable_grad() = Tensor();
  w.mutable_grad() = Tensor();

  manual_seed(11);
  Tensor ck = utils::checkpoint([&](const Tensor& in) { return block(in, w); }, x);
  expect_identical(ck.detach(), plain.detach(), "forward");
  ASSERT_NE(ck.grad_fn(), nullptr);
  EXPECT_EQ(ck.grad_fn()->name(), "CheckpointFunctionBackward");
  ck.pow(2).sum().backward();
  expect_identical(x.grad(), gx, "dx");
  expect_identical(w.grad(), gw, "dw");
  // The recomputation does not disturb the random stream of the code around it.
  expect_identical(rand({5}), after_plain, "stream after backward");

  // Without preserving the RNG state the recomputed masks differ, and so do the gradients.
  x.mutable_grad() = Tensor();
  manual_seed(11);
  Tensor loose = utils::checkpoint([&](const Tensor& in) { return block(in, w); }, x,
                                   /*preserve_rng_state=*/false);
  loose.pow(2).sum().backward();
  EXPECT_FALSE(allclose(x.grad(), gx));
}

TEST(GradCheckpoint, CapturedParametersAccumulate) {
  manual_seed(1);
  Tensor x = randn({3, 4});  // needs no gradient: only the captured parameters do
  Tensor w = randn({4, 2}).requires_grad_();
  Tensor b = randn({2}).requires_grad_();
  auto fn = [&](const Tensor& in) { return (in.matmul(w) + b).sigmoid(); };

  fn(x).sum().backward();
  Tensor gw = w.grad().clone(), gb = b.grad().clone();
  w.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();

  Tensor y = utils::checkpoint(fn, x);
  EXPECT_TRUE(y.requires_grad());
  y.sum().backward();
  expect_identical(w.grad(), gw, "dw");
  expect_identical(b.grad(), gb, "db");
  utils::checkpoint(fn, x).sum().backward();
  EXPECT_TRUE(allclose(w.grad(), gw * 2));
  EXPECT_TRUE(allclose(b.grad(), gb * 2));
}

TEST(GradCheckpoint, SeveralInputsAndOutputs) {
  manual_seed(2);
  Tensor a = randn({3}).requires_grad_();
  Tensor b = randn({3}).requires_grad_();
  Tensor c = randn({3});  // no gradient wanted
  auto fn = [](const TensorList& in) {
    return TensorList{in[0] * in[1] + in[2], in[0].exp(), in[1].sum()};
  };

  TensorList plain = fn({a, b, c});
  (plain[0].sum() * 3 + plain[2]).backward();  // output 1 takes no part in the loss
  Tensor ga = a.grad().clone(), gb = b.grad().clone();
  a.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();

  TensorList ck = utils::checkpoint(fn, {a, b, c, Tensor()});
  ASSERT_EQ(ck.size(), 3u);
  (ck[0].sum() * 3 + ck[2]).backward();
  expect_identical(a.grad(), ga, "da");
  expect_identical(b.grad(), gb, "db");
  EXPECT_FALSE(c.grad().defined());

  // autograd::grad through it.
  TensorList g = autograd::grad({utils::checkpoint(fn, {a, b, c})[1].sum()}, {a});
  EXPECT_TRUE(allclose(g[0], a.exp()));
}

TEST(GradCheckpoint, SegmentsOfADeepChain) {
  manual_seed(3);
  Tensor x = randn({8, 8}).requires_grad_();
  std::vector<Tensor> ws;
  for (int i = 0; i < 12; ++i) ws.push_back((randn({8, 8}) * 0.3).requires_grad_());
  auto segment = [&](int from, int to) {
    return [&ws, from, to](const Tensor& in) {
      Tensor h = in;
      for (int i = from; i < to; ++i) h = h.matmul(ws[static_cast<size_t>(i)]).tanh();
      return h;
    };
  };
  segment(0, 12)(x).sum().backward();
  Tensor gx = x.grad().clone(), g0 = ws[0].grad().clone(), g11 = ws[11].grad().clone();
  x.mutable_grad() = Tensor();
  for (Tensor& w : ws) w.mutable_grad() = Tensor();

  Tensor h = x;
  for (int s = 0; s < 12; s += 4) h = utils::checkpoint(segment(s, s + 4), h);
  h.sum().backward();
  expect_identical(x.grad(), gx, "dx");
  expect_identical(ws[0].grad(), g0, "dw0");
  expect_identical(ws[11].grad(), g11, "dw11");
}

TEST(GradCheckpoint, ModesAndErrors) {
  Tensor x = randn({3}).requires_grad_();
  {
    NoGradGuard g;
    Tensor y = utils::checkpoint([](const Tensor& in) { return in * 2; }, x);
    EXPECT_FALSE(y.requires_grad());
  }
  // The saved input is version-checked: modifying it before backward is an error.
  Tensor base = randn({3}).requires_grad_();
  Tensor in = base * 1;
  Tensor y = utils::checkpoint([](const Tensor& t) { return t.sin(); }, in);
  {
    NoGradGuard g;
    in.add_(1);
  }
  EXPECT_THROW(y.sum().backward(), Error);

  // fn must return as many outputs when recomputed.
  int calls = 0;
  TensorList out = utils::checkpoint(
      [&](const TensorList& t) {
        return ++calls == 1 ? TensorList{t[0] * 2} : TensorList{t[0] * 2, t[0]};
      },
      {x});
  try {
    out[0].sum().backward();
    ADD_FAILURE() << "no error";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[checkpoint] fn returned 1 outputs in forward but 2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(utils::checkpoint(std::function<Tensor(const Tensor&)>(), x), ValueError);
}
