// scaled_dot_product_attention on the CPU: the fused kernels against the float64 math path at
// head dims 64 and 128, odd lengths and every mask kind, in every floating dtype; the fallbacks
// (dropout, a mask that needs a gradient), second derivatives, and bad input.
#include <gtest/gtest.h>

#include "attention_checks.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = nn::functional;

namespace {

const std::vector<DType> kDtypes = {kFloat16, kBFloat16, kFloat32, kFloat64};

TEST(Attention, FusedMatchesMathHeadDim64) {
  manual_seed(1);
  for (DType dt : kDtypes) check_attention({{2, 3}, 37, 45, 64, 64}, dt, "cpu");
}

TEST(Attention, FusedMatchesMathHeadDim128Causal) {
  manual_seed(2);
  for (DType dt : kDtypes) check_attention({{1, 2}, 70, 65, 128, 128, MaskKind::Causal}, dt, "cpu");
  // More queries than keys, and fewer: causal is top-left aligned.
  check_attention({{2}, 9, 100, 32, 16, MaskKind::Causal}, kFloat32, "cpu");
  check_attention({{2}, 100, 9, 32, 16, MaskKind::Causal}, kFloat32, "cpu");
}

TEST(Attention, FusedMatchesMathWithMasks) {
  manual_seed(3);
  for (DType dt : kDtypes) {
    check_attention({{3, 2}, 33, 67, 64, 48, MaskKind::Bool}, dt, "cpu");
    check_attention({{3, 2}, 33, 67, 64, 48, MaskKind::Float}, dt, "cpu");
  }
}

TEST(Attention, FusedMatchesMathOnEmptyAndSingleSequences) {
  manual_seed(4);
  check_attention({{2}, 1, 1, 8, 8}, kFloat32, "cpu");
  check_attention({{2}, 0, 5, 8, 8}, kFloat32, "cpu");
}

TEST(Attention, FullyMaskedRowIsZero) {
  Tensor q = randn({1, 2, 4}).requires_grad_(), k = randn({1, 3, 4}).requires_grad_(),
         v = randn({1, 3, 2}).requires_grad_();
  Tensor mask = tensor(std::vector<uint8_t>{1, 1, 0, 0, 0, 0}, {2, 3}).to(kBool);
  Tensor out = F::scaled_dot_product_attention(q, k, v, mask);
  expect_close(out.select(1, 1), zeros({1, 2}), 0);
  out.sum().backward();
  EXPECT_TRUE(isfinite(q.grad()).all().item<bool>());
  EXPECT_TRUE(isfinite(k.grad()).all().item<bool>());
  expect_close(q.grad().select(1, 1), zeros({1, 4}), 0);
}

TEST(Attention, SecondDerivativesFollowTheMathPath) {
  manual_seed(5);
  const TensorOptions o = TensorOptions().dtype(kFloat64);
  Tensor q = randn({2, 5, 4}, o).requires_grad_(), k = randn({2, 6, 4}, o).requires_grad_(),
         v = randn({2, 6, 3}, o).requires_grad_();
  auto grad_norm = [&](bool fused) {
    Tensor out = fused
                     ? ops::scaled_dot_product_attention_fused(q, k, v, {}, true, std::nullopt)
                     : ops::scaled_dot_product_attention_math(q, k, v, {}, 0.0, true, std::nullopt);
    TensorList g = autograd::grad({(out * out).sum()}, {q, k}, {}, true, true);
    return autograd::grad({(g[0] * g[0]).sum() + (g[1] * g[1]).sum()}, {q, k, v});
  };
  const TensorList fused = grad_norm(true), math = grad_norm(false);
  for (size_t i = 0; i < 3; ++i) expect_close(fused[i], math[i], 1e-9);
}

TEST(Attention, MaskWithGradientTakesTheMathPath) {
  Tensor q = randn({2, 3, 4}), k = randn({2, 5, 4}), v = randn({2, 5, 2});
  Tensor mask = randn({3, 5}).requires_grad_();
  Tensor out = F::scaled_dot_product_attention(q, k, v, mask);
  out.sum().backward();
  ASSERT_TRUE(mask.grad().defined());
  // Rows of the softmax sum to one, so the gradient of sum(out) along each mask row sums to 0.
  expect_close(mask.grad().sum({1}), zeros({3}), 1e-5);
}

TEST(Attention, BadInput) { check_attention_errors("cpu"); }

}  // namespace

// On the CPU the op runs the math path (faster: GEMMs) until the scores it would hold reach
// 256 MiB, and the fused kernels from there on (memory decides).
TEST(Attention, CpuTakesTheFusedKernelsOnlyForLargeScores) {
  Tensor q = randn({2, 6, 4}).requires_grad_(), k = randn({2, 7, 4}), v = randn({2, 7, 3});
  Tensor small = F::scaled_dot_product_attention(q, k, v);
  ASSERT_NE(small.grad_fn(), nullptr);
  EXPECT_NE(small.grad_fn()->name(), "ScaledDotProductFlashAttentionForCpuBackward0");
  EXPECT_EQ(
      ops::scaled_dot_product_attention_fused(q, k, v, {}, false, std::nullopt).grad_fn()->name(),
      "ScaledDotProductFlashAttentionForCpuBackward0");
  // 8192 x 8192 float32 scores are 256 MiB: fused, without allocating them.
  Tensor ql = randn({1, 8192, 1}).requires_grad_(), kl = randn({1, 8192, 1}),
         vl = randn({1, 8192, 1});
  Tensor large = F::scaled_dot_product_attention(ql, kl, vl, {}, 0.0, true);
  ASSERT_NE(large.grad_fn(), nullptr);
  EXPECT_EQ(large.grad_fn()->name(), "ScaledDotProductFlashAttentionForCpuBackward0");
  // Where the fused kernels cannot run, the explicit entry says so.
  expect_error<ValueError>(
      [&] {
        ops::scaled_dot_product_attention_fused(q, k, v, randn({6, 7}).requires_grad_(), false,
                                                std::nullopt);
      },
      "[scaled_dot_product_attention] the fused kernels cannot run this call");
}
