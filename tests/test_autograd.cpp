// Autograd engine semantics: accumulation, graph lifetime, grad mode, hooks, autograd::grad,
// versions and in-place rules, views, deep graphs.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;

namespace {

Tensor leaf(std::vector<double> v, Shape s = {}) { return tensor(v, s, kFloat64).requires_grad_(); }

void expect_values(const Tensor& t, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_TRUE(t.defined());
  std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

}  // namespace

TEST(Autograd, LeafFlagsAndFactories) {
  Tensor x = ones({2, 3}, TensorOptions().dtype(kFloat64).requires_grad(true));
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  Tensor y = x * 2;
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MulBackward0");
  Tensor z = zeros({2});
  EXPECT_FALSE(z.requires_grad());
  EXPECT_FALSE((z * 2).requires_grad());
  EXPECT_NE(error_of([] {
              arange(3).requires_grad_();
            }).find("only Tensors of floating point dtype can require gradients"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              y.requires_grad_(false);
            }).find("you can only change requires_grad flags of leaf variables"),
            std::string::npos);
}

TEST(Autograd, ScalarBackwardAndAccumulation) {
  Tensor x = leaf({1, 2, 3}, {3});
  (x * x).sum().backward();
  expect_values(x.grad(), {2, 4, 6});
  (x * 3).sum().backward();  // accumulates
  expect_values(x.grad(), {5, 7, 9});
  x.mutable_grad().zero_();
  x.sum().backward();
  expect_values(x.grad(), {1, 1, 1});
}

TEST(Autograd, NonScalarNeedsGradient) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 2;
  EXPECT_NE(error_of([&] {
              y.backward();
            }).find("grad can be implicitly created only for scalar outputs"),
            std::string::npos);
  y.backward(tensor({1.0, 10.0}, {}, kFloat64));
  expect_values(x.grad(), {2, 20});
  EXPECT_NE(error_of([&] { zeros({1}).backward(); }).find("does not require grad"),
            std::string::npos);
}

TEST(Autograd, RetainGraphAndSecondBackward) {
  Tensor x = leaf({0.5, -1}, {2});
  Tensor y = x.exp().sum();
  y.backward({}, true);
  y.backward();  // the graph was retained once
  expect_values(x.grad(), {2 * std::exp(0.5), 2 * std::exp(-1.0)});
  std::string e = error_of([&] { y.backward(); });
  EXPECT_NE(e.find("Trying to backward through the graph a second time"), std::string::npos) << e;
}

TEST(Autograd, NoGradGuardAndEnableGrad) {
  Tensor x = leaf({1, 2}, {2});
  {
    NoGradGuard g;
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    x.mul_(2);  // in place on a leaf is fine without grad (optimizer updates)
    {
      EnableGradGuard e;
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
  expect_values(x.detach(), {2, 4});
}

TEST(Autograd, DetachSharesStorage) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 1;
  Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_same_storage(y));
  d.add_(1);
  expect_values(y, {2, 3});
  EXPECT_EQ(y._version(), d._version());
  Tensor z = x * 2;
  z.detach_();
  EXPECT_FALSE(z.requires_grad());
  EXPECT_TRUE(z.is_leaf());
}

TEST(Autograd, HooksRunInOrderAndReplaceGradients) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 3;
  std::vector<int> order;
  y.register_hook([&](const Tensor& g) {
    order.push_back(1);
    return g * 2;
  });
  y.register_hook([&](const Tensor& g) {
    order.push_back(2);
    expect_values(g, {2, 2});  // sees the first hook's result
    return Tensor();           // keeps it
  });
  size_t h = x.register_hook([&](const Tensor& g) {
    order.push_back(3);
    return g + 1;
  });
  y.sum().backward();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  expect_values(x.grad(), {7, 7});
  x.remove_hook(h);
  x.mutable_grad() = Tensor();
  (x * 3).sum().backward();
  expect_values(x.grad(), {3, 3});
  EXPECT_NE(error_of([] {
              zeros({2}).register_hook([](const Tensor& g) { return g; });
            }).find("doesn't require gradient"),
            std::string::npos);
}

TEST(Autograd, PostAccumulateGradHook) {
  Tensor w = leaf({1, 2}, {2});
  int calls = 0;
  w.register_post_accumulate_grad_hook([&](Tensor& p) {
    ++calls;
    expect_values(p.grad(), {1, 1});
    NoGradGuard g;
    p.sub_(p.grad());  // an optimizer step inside the hook
  });
  w.sum().backward();
  EXPECT_EQ(calls, 1);
  expect_values(w.detach(), {0, 1});
  EXPECT_NE(error_of([&] {
              (w * 2).register_post_accumulate_grad_hook([](Tensor&) {});
            }).find("non-leaf"),
            std::string::npos);
}

TEST(Autograd, RetainGrad) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 2;
  y.retain_grad();
  Tensor z = y * y;
  z.sum().backward();
  EXPECT_TRUE(y.retains_grad());
  expect_values(y.grad(), {4, 8});
  expect_values(x.grad(), {8, 16});
  Tensor w = x * 2;
  (w * 1).sum().backward();
  EXPECT_FALSE(w.grad().defined());
}

TEST(Autograd, GradFunction) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = leaf({3, 4}, {2});
  Tensor out = (x * y).sum();
  TensorList g = autograd::grad({out}, {x, y}, {}, true);
  expect_values(g[0], {3, 4});
  expect_values(g[1], {1, 2});
  EXPECT_FALSE(x.grad().defined());  // grad() does not accumulate
  Tensor unused = leaf({1}, {1});
  std::string e = error_of([&] { autograd::grad({out}, {unused}, {}, true); });
  EXPECT_NE(e.find("appears to not have been used in the graph"), std::string::npos) << e;
  TensorList g2 = autograd::grad({out}, {x, unused}, {}, true, false, true);
  EXPECT_TRUE(g2[0].defined());
  EXPECT_FALSE(g2[1].defined());
  EXPECT_NE(error_of([&] { autograd::grad({out}, {zeros({1})}); }).find("does not require grad"),
            std::string::npos);
}

TEST(Autograd, GradOfNonLeafInput) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 2;
  Tensor z = (y * y).sum();
  TensorList g = autograd::grad({z}, {y});
  expect_values(g[0], {4, 8});
}

TEST(Autograd, DoubleBackward) {
  // d2/dx2 of x^3 = 6x; of tanh: -2 tanh (1 - tanh^2); of exp: exp.
  Tensor x = leaf({0.5, -1.5}, {2});
  Tensor y = (x * x * x).sum();
  Tensor g = autograd::grad({y}, {x}, {}, std::nullopt, true)[0];
  EXPECT_TRUE(g.requires_grad());
  expect_values(g, {0.75, 6.75});
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  expect_values(gg, {3.0, -9.0});

  Tensor t = x.tanh().sum();
  Tensor dt = autograd::grad({t}, {x}, {}, std::nullopt, true)[0];
  Tensor d2t = autograd::grad({dt.sum()}, {x})[0];
  std::vector<double> want;
  for (double v : {0.5, -1.5})
    want.push_back(-2 * std::tanh(v) * (1 - std::tanh(v) * std::tanh(v)));
  expect_values(d2t, want);

  Tensor e = x.exp().sum();
  Tensor de = autograd::grad({e}, {x}, {}, std::nullopt, true)[0];
  expect_values(autograd::grad({de.sum()}, {x})[0], {std::exp(0.5), std::exp(-1.5)});
}

TEST(Autograd, DoubleBackwardMatmul) {
  // f = sum((A @ B)^2); df/dA = 2 (A B) B^T; d/dB of sum(df/dA) = 2 * (sum over rows ...): compare
  // with finite differences of the first derivative.
  Tensor a = tensor({1.0, 2.0, -1.0, 0.5}, {2, 2}, kFloat64).requires_grad_();
  Tensor b = tensor({0.3, -0.7, 1.1, 0.2}, {2, 2}, kFloat64).requires_grad_();
  auto first = [&](const Tensor& bb) {
    Tensor f = a.matmul(bb).pow(2).sum();
    return autograd::grad({f}, {a}, {}, std::nullopt, true)[0];
  };
  Tensor s = first(b).sum();
  Tensor gb = autograd::grad({s}, {b})[0];
  std::vector<double> bv = b.detach().to_vector<double>(), want;
  for (int i = 0; i < 4; ++i) {
    std::vector<double> p = bv, m = bv;
    p[i] += 1e-6;
    m[i] -= 1e-6;
    double fp = first(tensor(p, {2, 2}, kFloat64)).sum().item<double>();
    double fm = first(tensor(m, {2, 2}, kFloat64)).sum().item<double>();
    want.push_back((fp - fm) / 2e-6);
  }
  expect_values(gb, want, 1e-6);
}

TEST(Autograd, BackwardCreateGraphMakesDifferentiableGrad) {
  Tensor x = leaf({2}, {1});
  (x * x * x).sum().backward({}, std::nullopt, true);
  Tensor g = x.grad();
  EXPECT_TRUE(g.requires_grad());
  expect_values(g, {12});
  Tensor gg = autograd::grad({g.sum()}, {x})[0];
  expect_values(gg, {12});
}

TEST(Autograd, VersionCounterError) {
  Tensor x =
      tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0}, {3, 4}, kFloat32)
          .requires_grad_();
  Tensor y = x.exp();
  EXPECT_EQ(y._version(), 0u);
  Tensor z = y.sum();
  y.add_(1);  // exp saved its output
  EXPECT_EQ(y._version(), 1u);
  std::string e = error_of([&] { z.backward(); });
  EXPECT_NE(e.find("one of the variables needed for gradient computation has been modified by an "
                   "inplace operation: [cpu float32 [3, 4]], which is output 0 of ExpBackward0, is "
                   "at version 1; expected version 0 instead."),
            std::string::npos)
      << e;
  // Views share the counter.
  Tensor w = x * 1;
  Tensor v = w.view({12});
  v.mul_(2);
  EXPECT_EQ(w._version(), 1u);
}

TEST(Autograd, LeafInPlaceErrors) {
  Tensor x = leaf({1, 2}, {2});
  std::string e = error_of([&] { x.add_(1); });
  EXPECT_NE(e.find("a leaf Variable that requires grad is being used in an in-place operation."),
            std::string::npos)
      << e;
  e = error_of([&] { x.narrow(0, 0, 1).mul_(2); });
  EXPECT_NE(
      e.find(
          "a view of a leaf Variable that requires grad is being used in an in-place operation."),
      std::string::npos)
      << e;
}

TEST(Autograd, NonLeafInPlaceRebasesHistory) {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 2;
  y.mul_(x);  // y = 2x^2: the formula reads the old y, which the write destroys
  y.add_(x);  // y = 2x^2 + x
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward0");
  y.sum().backward();
  expect_values(x.grad(), {5, 9});
  Tensor a = leaf({0.5}, {1});
  Tensor b = a * 1;
  b.exp_().tanh_().sigmoid_();
  b.sum().backward();
  double t = std::tanh(std::exp(0.5)), s = 1 / (1 + std::exp(-t));
  expect_values(a.grad(), {s * (1 - s) * (1 - t * t) * std::exp(0.5)});
}

TEST(Autograd, InPlaceOnViewUsesCopySlices) {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  Tensor y = x * 1;
  y.narrow(0, 1, 2).mul_(10);  // y = [x0, 10 x1, 10 x2, x3]
  EXPECT_EQ(y.grad_fn()->name(), "CopySlices");
  (y * tensor({1.0, 2.0, 3.0, 4.0}, {}, kFloat64)).sum().backward();
  expect_values(x.grad(), {1, 20, 30, 4});

  // Writing a tensor that requires grad into a buffer that does not.
  Tensor buf = zeros({2, 3}, kFloat64);
  Tensor r = leaf({1, 2, 3}, {3});
  buf.select(0, 1).copy_(r * r);
  EXPECT_TRUE(buf.requires_grad());
  buf.sum().backward();
  expect_values(r.grad(), {2, 4, 6});

  // A view taken before the base changed sees the new history.
  Tensor p = leaf({1, 2}, {2});
  Tensor q = p * 1;
  Tensor view = q.view({2, 1});
  q.mul_(3);
  view.sum().backward();
  expect_values(p.grad(), {3, 3});
}

TEST(Autograd, DiamondReusesTensor) {
  Tensor x = leaf({1.5}, {1});
  Tensor y = x * x;
  Tensor acc = y;
  for (int i = 0; i < 20; ++i) acc = acc + y * x;  // x used in many branches
  acc.sum().backward();
  // acc = x^2 + 20 x^3 -> 2x + 60 x^2
  expect_values(x.grad(), {2 * 1.5 + 60 * 1.5 * 1.5}, 1e-9);
}

TEST(Autograd, DeepChainHasNoRecursion) {
  Tensor x = leaf({1.0}, {1});
  Tensor y = x;
  for (int i = 0; i < 10000; ++i) y = y * 1.0001;
  y.sum().backward();
  expect_values(x.grad(), {std::pow(1.0001, 10000)}, 1e-6);
  // Releasing a deep graph must not recurse either.
  Tensor z = x;
  for (int i = 0; i < 100000; ++i) z = z + 1;
  z = Tensor();
}

TEST(Autograd, BroadcastGradientsSumToInputShape) {
  Tensor a = tensor({1.0, 2.0, 3.0, 4.0, 5.0, 6.0}, {2, 3}, kFloat64).requires_grad_();
  Tensor b = tensor({1.0, 2.0, 3.0}, {3}, kFloat64).requires_grad_();
  Tensor c = leaf({2}, {});
  ((a * b) - c).sum().backward();
  expect_values(a.grad(), {1, 2, 3, 1, 2, 3});
  expect_values(b.grad(), {5, 7, 9});
  expect_values(c.grad(), {-6});
}

TEST(Autograd, MixedDtypesCastBack) {
  Tensor x = tensor({1.0f, 2.0f}, {}, kFloat32).requires_grad_();
  Tensor y = x.to(kFloat64) * 3;
  EXPECT_EQ(y.dtype(), kFloat64);
  y.sum().backward();
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  expect_values(x.grad(), {3, 3});
}

TEST(Autograd, AmaxSplitsTiesEvenly) {
  Tensor x = leaf({1, 3, 3, 2}, {4});
  x.amax().backward();
  expect_values(x.grad(), {0, 0.5, 0.5, 0});
}

TEST(Autograd, SplitAndCat) {
  Tensor x = leaf({1, 2, 3, 4, 5}, {5});
  TensorList parts = x.split(2);
  Tensor y = cat({parts[2] * 3, parts[0] * 2}, 0);
  y.sum().backward();
  expect_values(x.grad(), {2, 2, 0, 0, 3});
}
