// scaled_dot_product_attention's CUDA kernels under the emulator: the fused forward and backward
// against the float64 math path on the host, at small sizes (the emulator runs a fiber per
// thread), in every floating dtype; mixed devices and bad input.
#include <gtest/gtest.h>

#include "attention_checks.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = nn::functional;

namespace {

const std::vector<DType> kDtypes = {kFloat16, kBFloat16, kFloat32, kFloat64};

TEST(AttentionSim, FusedMatchesMath) {
  manual_seed(11);
  for (DType dt : kDtypes) {
    check_attention({{2, 2}, 9, 13, 16, 8}, dt, "cuda:0");
    check_attention({{1, 2}, 33, 17, 16, 16, MaskKind::Causal}, dt, "cuda:0");
  }
}

TEST(AttentionSim, FusedMatchesMathWithMasks) {
  manual_seed(12);
  for (DType dt : {kBFloat16, kFloat32}) {
    check_attention({{2, 2}, 7, 33, 8, 8, MaskKind::Bool}, dt, "cuda:0");
    check_attention({{2, 2}, 7, 33, 8, 8, MaskKind::Float}, dt, "cuda:0");
  }
}

TEST(AttentionSim, HeadDim64And128) {
  manual_seed(13);
  check_attention({{1, 1}, 5, 9, 64, 64, MaskKind::Causal}, kBFloat16, "cuda:0");
  check_attention({{1, 1}, 5, 9, 128, 128}, kFloat16, "cuda:0");
}

TEST(AttentionSim, HeadDimAbove128FallsBackToTheMathPath) {
  manual_seed(14);
  check_attention({{1, 1}, 3, 4, 160, 8}, kFloat32, "cuda:0", false);
}

TEST(AttentionSim, MixedDevices) {
  const Tensor q = randn({2, 3, 4}, TensorOptions().device(Device("cuda:0")));
  const Tensor k = randn({2, 5, 4});
  expect_error<Error>([&] { F::scaled_dot_product_attention(q, k, k); },
                      "Expected all tensors to be on the same device");
}

TEST(AttentionSim, BadInput) { check_attention_errors("cuda:0"); }

}  // namespace
