// Autocast on the emulated CUDA device: every row of the policy table under CUDA's lists in
// float16 and bfloat16, binary_cross_entropy refused, CUDA and CPU autocast independent, the
// parameter cast cache, gradients' dtypes, and float32 accumulation of the 16-bit kernels.
#include <gtest/gtest.h>

#include <string>

#include "autocast_cases.h"
#include "ember/ember.h"
#include "ops/autocast.h"

using namespace ember;
using namespace ember_test;
namespace ac = ember::autocast;

namespace {

const Device kDev(kCUDA, 0);

TEST(AutocastCudaSim, EveryRowFloat16) {
  manual_seed(0);
  EXPECT_EQ(check_autocast_table(kDev, kFloat16), ac::kNumOps);
}

TEST(AutocastCudaSim, EveryRowBFloat16) {
  manual_seed(0);
  EXPECT_EQ(check_autocast_table(kDev, kBFloat16), ac::kNumOps);
}

TEST(AutocastCudaSim, BinaryCrossEntropyIsRefused) {
  Tensor p = (rand({4}) * 0.5 + 0.25).to(kDev);
  Tensor t = rand({4}).to(kDev);
  amp::autocast guard(kCUDA);
  try {
    nn::functional::binary_cross_entropy(p, t);
    ADD_FAILURE() << "binary_cross_entropy ran under CUDA autocast";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("[binary_cross_entropy]", 0), 0u) << m;
    EXPECT_NE(m.find("unsafe to autocast"), std::string::npos) << m;
    EXPECT_NE(m.find("binary_cross_entropy_with_logits"), std::string::npos) << m;
  }
  // The module goes through the same function.
  EXPECT_THROW(nn::BCELoss()->forward(p, t), ValueError);
  // With logits it is safe, and runs in float32.
  EXPECT_EQ(nn::functional::binary_cross_entropy_with_logits(p.to(kFloat16), t).dtype(), kFloat32);
}

TEST(AutocastCudaSim, DeviceTypesAreIndependent) {
  Tensor a = rand({2, 3}).to(kDev), b = rand({3, 2}).to(kDev);
  Tensor ca = rand({2, 3}), cb = rand({3, 2});
  {
    amp::autocast guard(kCPU);
    EXPECT_EQ(mm(a, b).dtype(), kFloat32);  // CUDA tensors: CUDA autocast is off
    EXPECT_EQ(mm(ca, cb).dtype(), kBFloat16);
  }
  {
    amp::autocast guard(kCUDA);
    EXPECT_EQ(mm(a, b).dtype(), kFloat16);
    EXPECT_EQ(mm(ca, cb).dtype(), kFloat32);
    EXPECT_EQ(softmax(mm(a, b), 1).dtype(), kFloat32);  // on CUDA's float32 list
  }
}

TEST(AutocastCudaSim, OpsOffTheListsKeepTheirInputDtype) {
  Tensor a = rand({2, 3}).to(kDev), b = rand({3, 2}).to(kDev);
  amp::autocast guard(kCUDA);
  Tensor h = mm(a, b);  // float16
  EXPECT_EQ(relu(h).dtype(), kFloat16);
  EXPECT_EQ(nn::functional::mish(h).dtype(), kFloat16);  // composed of softplus, one op in PyTorch
  EXPECT_EQ(mean(h).dtype(), kFloat16);
  EXPECT_EQ((h * 2.0 + 1.0).dtype(), kFloat16);
}

TEST(AutocastCudaSim, ParameterCastOncePerForward) {
  Tensor w = rand({4, 4}).to(kDev).requires_grad_();
  Tensor x = rand({2, 4}).to(kDev);
  Tensor loss;
  {
    amp::autocast guard(kCUDA, kBFloat16);
    const uint64_t start = ac::cast_count();
    Tensor y = linear(relu(linear(x, w)), w);
    EXPECT_EQ(y.dtype(), kBFloat16);
    EXPECT_EQ(ac::cast_count() - start, 2u);
    EXPECT_EQ(ac::cache_size(), 1u);
    loss = y.sum();
    EXPECT_EQ(loss.dtype(), kFloat32);  // sum is on CUDA's float32 list
  }
  EXPECT_EQ(ac::cache_size(), 0u);
  loss.backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_EQ(w.grad().device(), kDev);
}

TEST(AutocastCudaSim, MlpGradientsInFloat32) {
  manual_seed(2);
  nn::Sequential net(nn::Linear(6, 8), nn::ReLU(), nn::Linear(8, 3));
  net->to(kDev);
  Tensor x = randn({5, 6}).to(kDev);
  Tensor target = tensor(std::vector<int64_t>{0, 2, 1, 1, 0}, {5}).to(kDev);
  Tensor loss;
  {
    amp::autocast guard(kCUDA);
    Tensor logits = net->forward(x);
    EXPECT_EQ(logits.dtype(), kFloat16);
    loss = nn::functional::cross_entropy(logits, target);
    EXPECT_EQ(loss.dtype(), kFloat32);
  }
  loss.backward();
  for (const Tensor& p : net->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().dtype(), kFloat32);
  }
}

TEST(AutocastCudaSim, BFloat16KernelsAccumulateInFloat32) {
  manual_seed(3);
  EXPECT_EQ(check_16bit_accumulation(kDev, kBFloat16), 14u);
}

TEST(AutocastCudaSim, Float16KernelsAccumulateInFloat32) {
  manual_seed(4);
  EXPECT_EQ(check_16bit_accumulation(kDev, kFloat16), 14u);
}

}  // namespace
