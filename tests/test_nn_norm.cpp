// Normalisation layers, dropout and embedding: running statistics as PyTorch updates them,
// train/eval switching, module printing and state dict keys, dropout statistics, embedding's
// padding_idx gradient and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <sstream>

#include "ember/ember.h"
#include "ember/random.h"
#include "kernels/philox.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = ember::nn::functional;

namespace {

std::string repr(const nn::Module& m) {
  std::ostringstream s;
  m.pretty_print(s);
  return s.str();
}

std::vector<std::string> keys(const nn::StateDict& d) { return d.keys(); }

// PyTorch's update: running = (1 - m) running + m batch, unbiased variance.
void expect_running_after(nn::BatchNorm2d& bn, const std::vector<Tensor>& batches,
                          std::optional<double> momentum) {
  Tensor rm = zeros({bn->options.num_features()}, TensorOptions(kFloat64));
  Tensor rv = ones({bn->options.num_features()}, TensorOptions(kFloat64));
  int64_t k = 0;
  for (const Tensor& x : batches) {
    ++k;
    const double m = momentum ? *momentum : 1.0 / static_cast<double>(k);
    const Tensor xd = x.to(kFloat64);
    rm = rm * (1 - m) + xd.mean({0, 2, 3}) * m;
    rv = rv * (1 - m) + xd.var({0, 2, 3}, 1) * m;
  }
  expect_close(bn->running_mean, rm);
  expect_close(bn->running_var, rv);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), static_cast<int64_t>(batches.size()));
}

}  // namespace

TEST(NnNorm, BatchNormRunningStatisticsFollowPyTorch) {
  manual_seed(3);
  for (std::optional<double> momentum :
       {std::optional<double>(0.1), std::optional<double>(0.3), std::optional<double>()}) {
    nn::BatchNorm2d bn(nn::BatchNormOptions(3).momentum(momentum));
    std::vector<Tensor> batches;
    for (int i = 0; i < 4; ++i) {
      batches.push_back(randn({4, 3, 2, 5}) * (i + 1.0) + i);
      Tensor y = bn(batches.back());
      // Training output uses the batch's own statistics (biased variance).
      const Tensor x = batches.back();
      const Tensor ref = (x - x.mean({0, 2, 3}, true)) / (x.var({0, 2, 3}, 0, true) + 1e-5).sqrt();
      expect_close(y, ref, 1e-4);
    }
    expect_running_after(bn, batches, momentum);
  }
}

TEST(NnNorm, BatchNormEvalUsesRunningStatistics) {
  manual_seed(4);
  nn::BatchNorm1d bn(nn::BatchNormOptions(5).eps(1e-3));
  for (int i = 0; i < 3; ++i) bn(randn({8, 5}) * 2.0 + 1.0);
  bn->eval();
  const Tensor x = randn({6, 5, 4});
  const Tensor rm = bn->running_mean.clone(), rv = bn->running_var.clone();
  const Tensor y = bn(x);
  const Tensor ref = (x - rm.view({1, 5, 1})) / (rv.view({1, 5, 1}) + 1e-3).sqrt() *
                         bn->weight.detach().view({1, 5, 1}) +
                     bn->bias.detach().view({1, 5, 1});
  expect_close(y, ref);
  // Evaluation leaves the statistics alone.
  expect_close(bn->running_mean, rm, 0);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 3);
  bn->train();
  bn(x);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 4);
  EXPECT_FALSE(allclose(bn->running_mean, rm));
}

TEST(NnNorm, BatchNormWithoutRunningStatsUsesBatchStatistics) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(2).track_running_stats(false).affine(false));
  EXPECT_TRUE(bn->named_buffers().empty());
  EXPECT_TRUE(bn->named_parameters().empty());
  bn->eval();
  const Tensor x = tensor(std::vector<float>{1, 10, 3, 30}, Shape{2, 2});
  expect_close(bn(x), tensor(std::vector<float>{-1, -1, 1, 1}, Shape{2, 2}), 1e-3);
}

TEST(NnNorm, ModulesPrintAndNameTheirStateAsPyTorch) {
  nn::BatchNorm2d bn(32);
  EXPECT_EQ(repr(*bn),
            "BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(keys(bn->state_dict()),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var",
                                      "num_batches_tracked"}));
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  expect_close(bn->weight, ones({32}), 0);
  expect_close(bn->running_var, ones({32}), 0);
  nn::BatchNorm1d bn1(nn::BatchNormOptions(4).momentum(std::nullopt).affine(false));
  EXPECT_EQ(repr(*bn1),
            "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, track_running_stats=True)");
  EXPECT_EQ(repr(*nn::LayerNorm(nn::LayerNormOptions({16}))),
            "LayerNorm((16,), eps=1e-05, elementwise_affine=True)");
  EXPECT_EQ(repr(*nn::LayerNorm(nn::LayerNormOptions({4, 8}).eps(1e-6).elementwise_affine(false))),
            "LayerNorm((4, 8), eps=1e-06, elementwise_affine=False)");
  EXPECT_EQ(repr(*nn::GroupNorm(4, 32)), "GroupNorm(4, 32, eps=1e-05, affine=True)");
  EXPECT_EQ(repr(*nn::RMSNorm(nn::RMSNormOptions({8}))),
            "RMSNorm((8,), eps=None, elementwise_affine=True)");
  EXPECT_EQ(repr(*nn::Dropout(0.25)), "Dropout(p=0.25, inplace=False)");
  EXPECT_EQ(repr(*nn::Dropout()), "Dropout(p=0.5, inplace=False)");
  EXPECT_EQ(repr(*nn::Embedding(10, 3)), "Embedding(10, 3)");
  EXPECT_EQ(repr(*nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(-1))),
            "Embedding(10, 3, padding_idx=9)");
  nn::LayerNorm ln(nn::LayerNormOptions({2, 3}));
  EXPECT_EQ(keys(ln->state_dict()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(ln->weight.sizes(), Shape({2, 3}));
  EXPECT_EQ(keys(nn::RMSNorm(nn::RMSNormOptions({3}))->state_dict()),
            (std::vector<std::string>{"weight"}));
}

TEST(NnNorm, LayerGroupAndRmsNormModules) {
  manual_seed(5);
  const Tensor x = randn({2, 6, 3});
  nn::LayerNorm ln(nn::LayerNormOptions({3}));
  const Tensor y = ln(x);
  expect_close(y, (x - x.mean({-1}, true)) / (x.var({-1}, 0, true) + 1e-5).sqrt(), 1e-4);
  nn::GroupNorm gn(3, 6);
  const Tensor g = gn(x).view({2, 3, 6});
  expect_close(g.mean({-1}), zeros({2, 3}), 1e-5);
  nn::RMSNorm rms(nn::RMSNormOptions({3}).eps(0.0));
  expect_close(rms(x), x / (x * x).mean({-1}, true).sqrt(), 1e-5);
  // Default eps: the dtype's epsilon.
  const Tensor z = zeros({1, 4});
  expect_close(F::rms_norm(z + 1e-4, {4}),
               ones({1, 4}) * (1e-4 / std::sqrt(1e-8 + 1.1920928955078125e-07)), 1e-4);
}

TEST(NnNorm, NormGradientsReachWeightAndBias) {
  manual_seed(6);
  nn::BatchNorm2d bn(3);
  const Tensor x = randn({2, 3, 2, 2}, TensorOptions().requires_grad(true));
  (bn(x) * arange(24).view({2, 3, 2, 2}).to(kFloat32)).sum().backward();
  ASSERT_TRUE(bn->weight.grad().defined());
  ASSERT_TRUE(bn->bias.grad().defined());
  expect_close(bn->bias.grad(), arange(24).view({2, 3, 2, 2}).to(kFloat32).sum({0, 2, 3}));
  // Batch statistics: the input gradient of a per-channel constant vanishes.
  x.mutable_grad() = Tensor();
  (bn(x) * 3.0).sum().backward();
  expect_close(x.grad(), zeros({2, 3, 2, 2}), 1e-5);
}

TEST(NnNorm, DropoutStatistics) {
  manual_seed(7);
  const Tensor x = ones({200, 100});
  for (double p : {0.1, 0.25, 0.5, 0.9}) {
    const Tensor y = F::dropout(x, p, true);
    const double zeroed = (y == 0).to(kFloat64).mean().item<double>();
    EXPECT_NEAR(zeroed, p, 0.02) << p;
    // Kept elements are scaled by 1 / (1 - p).
    const Tensor kept = y.masked_select(y != 0);
    expect_close(kept, full({kept.numel()}, 1.0 / (1.0 - p)), 1e-6);
  }
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
  expect_close(F::dropout(x, 1.0, true), zeros({200, 100}), 0);
  expect_error<ValueError>([&] { F::dropout(x, 1.5); }, "between 0 and 1, but got 1.5");
  expect_error<ValueError>([&] { nn::Dropout(-0.1); }, "between 0 and 1");

  nn::Dropout drop(0.25);
  const Tensor t = drop(x);
  EXPECT_GT((t == 0).sum().item<int64_t>(), 0);
  drop->eval();
  expect_close(drop(x), x, 0);

  // dropout2d zeroes whole channels.
  const Tensor c = F::dropout2d(ones({8, 16, 3, 3}), 0.5, true);
  const Tensor per_channel = c.sum({2, 3});
  EXPECT_TRUE(((per_channel == 0) | (per_channel == 18)).all().item<bool>());
}

TEST(NnNorm, DropoutMaskIsBernoulliOfKeepProbabilityAndGradientUsesIt) {
  for (DType dt : {kFloat32, kFloat64, kFloat16}) {
    const Tensor x = randn({37, 11}).to(dt).requires_grad_(true);
    const GeneratorState s = default_generator().get_state();
    const Tensor y = F::dropout(x, 0.3, true);
    default_generator().set_state(s);
    const Tensor keep = bernoulli(zeros({37, 11}, TensorOptions(dt)), 0.7);
    expect_close(y, x.detach() * keep / 0.7, dt == kFloat16 ? 1e-3 : 1e-6);
    y.backward(ones_like(y));
    expect_close(x.grad(), keep / 0.7, dt == kFloat16 ? 1e-3 : 1e-6);
  }
}

// The dropout mask recomputed from raw Philox blocks: element i is kept when the top 24 bits of
// word i % 4 of block i / 4, as a fraction of 2^24, are below 1 - p (float32; float64 uses 53 bits
// of a word pair, 2 elements per block). Odd lengths, several generator chunks and threads.
TEST(NnNorm, DropoutMaskFollowsThePhiloxLayout) {
  const int saved = get_num_threads();
  manual_seed(21);
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{63}, int64_t{2053}, int64_t{70001}}) {
      for (double p : {0.1, 0.25, 0.5}) {
        const Tensor x = randn({n});
        const GeneratorState s = default_generator().get_state();
        const std::vector<float> y = F::dropout(x, p, true).to_vector<float>();
        const std::vector<float> xv = x.to_vector<float>();
        const float scale = static_cast<float>(1.0 / (1.0 - p));
        for (int64_t i = 0; i < n; ++i) {
          const philox::Words w = philox::block(s.seed, s.offset, static_cast<uint64_t>(i / 4));
          const bool keep = static_cast<double>(w.v[i % 4] >> 8) / 16777216.0 < 1.0 - p;
          const size_t k = static_cast<size_t>(i);
          ASSERT_EQ(y[k], keep ? xv[k] * scale : 0.0f) << "n " << n << " p " << p << " i " << i;
        }
        const Tensor xd = randn({n}).to(kFloat64);
        const GeneratorState sd = default_generator().get_state();
        const std::vector<double> yd = F::dropout(xd, p, true).to_vector<double>();
        const std::vector<double> xdv = xd.to_vector<double>();
        for (int64_t i = 0; i < n; ++i) {
          const philox::Words w = philox::block(sd.seed, sd.offset, static_cast<uint64_t>(i / 2));
          const uint64_t bits =
              w.v[2 * (i % 2)] | (static_cast<uint64_t>(w.v[2 * (i % 2) + 1]) << 32);
          const bool keep = static_cast<double>(bits >> 11) * std::ldexp(1.0, -53) < 1.0 - p;
          const size_t k = static_cast<size_t>(i);
          ASSERT_EQ(yd[k], keep ? xdv[k] * (1.0 / (1.0 - p)) : 0.0) << "n " << n << " i " << i;
        }
      }
    }
  }
  set_num_threads(saved);
}

// A uniform equal to 1 - p is dropped, one step below it is kept: the comparison is strict at the
// exact boundary.
TEST(NnNorm, DropoutKeepBoundaryIsStrict) {
  manual_seed(22);
  const Tensor x = ones({5});
  const GeneratorState s = default_generator().get_state();
  const uint32_t u = philox::block(s.seed, s.offset, 0).v[0] >> 8;  // element 0's 24 bits
  ASSERT_GT(u, 0u);
  for (uint32_t edge : {u, u + 1}) {
    const double keep = static_cast<double>(edge) / 16777216.0;  // exact, and so is 1 - keep
    default_generator().set_state(s);
    const float y0 = F::dropout(x, 1.0 - keep, true).to_vector<float>()[0];
    EXPECT_EQ(y0 != 0.0f, edge > u) << edge;
  }
}

// layer_norm over the last dim takes the (rows, features) loops; group_norm with one group over a
// (N, 1, C) view of the same data takes the general row loops. Same sums in the same order, so
// the outputs and input gradients agree to the bit.
TEST(NnNorm, LayerNormRowLoopsMatchTheGeneralLoops) {
  manual_seed(23);
  for (int64_t c : {int64_t{5}, int64_t{256}, int64_t{301}}) {
    const Tensor x = (randn({37, c}) * 3.0 + 1.0).requires_grad_(true);
    const Tensor xg = x.detach().clone().requires_grad_(true);
    const Tensor w = randn({37, c});
    const Tensor y = F::layer_norm(x, {c}, {}, {}, 1e-5);
    const Tensor yg = F::group_norm(xg.view({37, 1, c}), 1, {}, {}, 1e-5).view({37, c});
    EXPECT_TRUE(equal(y.detach(), yg.detach())) << c;
    (y * w).sum().backward();
    (yg * w).sum().backward();
    EXPECT_TRUE(equal(x.grad(), xg.grad())) << c;
  }
}

TEST(NnNorm, EmbeddingPaddingIdx) {
  manual_seed(8);
  nn::Embedding emb(nn::EmbeddingOptions(6, 3).padding_idx(2));
  expect_close(emb->weight.detach().select(0, 2), zeros({3}), 0);
  const Tensor idx = tensor(std::vector<int64_t>{2, 0, 2, 5, 0}, Shape{5});
  const Tensor y = emb(idx);
  EXPECT_EQ(y.sizes(), Shape({5, 3}));
  expect_close(y.select(0, 1), emb->weight.detach().select(0, 0), 0);
  y.sum().backward();
  const Tensor expected =
      tensor(std::vector<float>{2, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, Shape{6, 3});
  expect_close(emb->weight.grad(), expected, 0);
  // int32 indices, and without padding every row is trained.
  nn::Embedding plain(4, 2);
  plain(tensor(std::vector<int64_t>{3, 3}, Shape{2}).to(kInt32)).sum().backward();
  expect_close(plain->weight.grad().select(0, 3), full({2}, 2.0), 0);
  expect_error<IndexError>([&] { emb(tensor(std::vector<int64_t>{6}, Shape{1})); },
                           "index 6 is out of bounds");
  expect_error<ValueError>([&] { nn::Embedding(nn::EmbeddingOptions(4, 2).padding_idx(4)); },
                           "padding_idx must be within num_embeddings");
}

TEST(NnNorm, Errors) {
  const Tensor x = randn({2, 4, 3});
  expect_error<ValueError>([&] { F::batch_norm(x, zeros({3}), ones({3}), {}, {}, true); },
                           "[batch_norm] running_mean should contain 4 elements not 3");
  expect_error<ValueError>([&] { F::batch_norm(x, zeros({4}), ones({5})); },
                           "running_var should contain 4 elements not 5");
  expect_error<ValueError>([&] { F::batch_norm(x, {}, {}, ones({3}), {}, true); },
                           "weight should contain 4 elements not 3");
  expect_error<ValueError>(
      [&] {
        F::batch_norm(randn({1, 4}), {}, {}, {}, {}, true);
      },
      "Expected more than 1 value per channel when training");
  nn::BatchNorm1d bn1(4);
  expect_error<ValueError>(
      [&] {
        bn1(randn({2, 4, 3, 3}));
      },
      "expected 2D or 3D input (got 4D input)");
  nn::BatchNorm2d bn2(4);
  expect_error<ValueError>([&] { bn2(x); }, "expected 4D input (got 3D input)");
  expect_error<ValueError>([&] { F::group_norm(x, 3); },
                           "Expected number of channels in input to be divisible by num_groups");
  expect_error<ValueError>([&] { nn::GroupNorm(3, 4); }, "divisible by num_groups");
  expect_error<ValueError>([&] { F::layer_norm(x, {4}); },
                           "Given normalized_shape=[4], expected input with shape [*, 4]");
  expect_error<ValueError>([&] { F::rms_norm(x, {2, 3}); }, "normalized_shape=[2, 3]");
  expect_error<ValueError>([&] { F::layer_norm(x, {3}, ones({4})); },
                           "Expected weight to be of same shape");
  expect_error<TypeError>(
      [&] {
        F::layer_norm(zeros({2, 3}, TensorOptions(kInt64)), {3});
      },
      "floating point");
}

// With create_graph the backward is built from differentiable ops: its first derivatives equal
// the fused kernels', and its second derivatives match finite differences of the first.
TEST(NnNorm, SecondDerivativesMatchFiniteDifferences) {
  manual_seed(9);
  const TensorOptions f64 = TensorOptions(kFloat64);
  const Tensor w = randn({6}, f64), b = randn({6}, f64);
  const std::vector<std::function<Tensor(const Tensor&)>> ops = {
      [&](const Tensor& x) { return F::layer_norm(x, {6}, w, b); },
      [&](const Tensor& x) { return F::rms_norm(x, {6}, w, 1e-5); },
      [&](const Tensor& x) {
        return F::group_norm(x.view({2, 6, 2}), 3, w, b);
      },
      [&](const Tensor& x) {
        return F::batch_norm(x.view({2, 6, 2}), {}, {}, w, b, true);
      },
  };
  for (size_t k = 0; k < ops.size(); ++k) {
    const Tensor x0 = randn({4, 6}, f64);
    const Tensor u = randn({2, 6, 2}, f64).view(ops[k](x0).sizes()), v = randn({4, 6}, f64);
    // g(x) = d/dx sum(op(x) * u); h(x) = sum(g(x) * v).
    auto first = [&](const Tensor& x, bool create) {
      Tensor xr = x.detach().clone().requires_grad_(true);
      Tensor y = (ops[k](xr) * u).sum();
      return std::make_pair(xr, autograd::grad({y}, {xr}, {}, std::nullopt, create)[0]);
    };
    const auto [xr, g] = first(x0, true);
    expect_close(g, first(x0, false).second, 1e-10);
    const Tensor hx = autograd::grad({(g * v).sum()}, {xr})[0];
    const double h = 1e-6;
    std::vector<double> fd;
    const std::vector<double> base = x0.to_vector<double>();
    for (size_t i = 0; i < base.size(); ++i) {
      std::vector<double> p = base, m = base;
      p[i] += h;
      m[i] -= h;
      const double gp = (first(tensor(p, Shape{4, 6}), false).second * v).sum().item<double>();
      const double gm = (first(tensor(m, Shape{4, 6}), false).second * v).sum().item<double>();
      fd.push_back((gp - gm) / (2 * h));
    }
    expect_close(hx, tensor(fd, Shape{4, 6}), 1e-5);
  }
}
