// Autograd on emulated CUDA devices: backward runs where the tensors live, and a graph that
// moves a tensor to a second device and back sends the gradient back across.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ember/ember.h"

using namespace ember;

namespace {

// Two emulated devices, set before the runtime is first used.
const bool kEnvSet = [] { return setenv("EMBER_SIM_DEVICES", "2", 1) == 0; }();

}  // namespace

// Transfers only (copy kernels): the gradient walks back from the host through cuda:1 to cuda:0.
TEST(AutogradCudaSim, TransfersCarryGradientsBack) {
  ASSERT_TRUE(kEnvSet);
  ASSERT_EQ(cuda::device_count(), 2);
  Tensor x =
      tensor({1.0f, 2.0f, 3.0f}, {}, TensorOptions().device(Device("cuda:0"))).requires_grad_();
  Tensor y = x.to(Device("cuda:1")).to(kFloat64).cpu();
  EXPECT_EQ(y.grad_fn()->name(), "ToCopyBackward0");
  y.backward(tensor({0.5, -1.0, 4.0}, {}, kFloat64));
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), Device("cuda:0"));
  EXPECT_EQ(x.grad().dtype(), kFloat32);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{0.5f, -1.0f, 4.0f}));
  // A CPU leaf sent to a device gets its gradient back on the CPU.
  Tensor w = tensor({1.0f, 2.0f}, {}, kFloat32).requires_grad_();
  Tensor on_device = w.to(Device("cuda:1"));
  on_device.backward(full({2}, 3.0f, TensorOptions().device(Device("cuda:1"))));
  EXPECT_TRUE(w.grad().is_cpu());
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3.0f, 3.0f}));
}

// Arithmetic on the devices (element-wise and reduction kernels).
TEST(AutogradCudaSim, BackwardOnDevice) {
  ASSERT_TRUE(kEnvSet);
  Tensor x =
      tensor({1.0f, 2.0f, 3.0f}, {}, TensorOptions().device(Device("cuda:0"))).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().device(), Device("cuda:0"));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4, 6}));
}

TEST(AutogradCudaSim, GraphSpanningTwoDevices) {
  ASSERT_TRUE(kEnvSet);
  ASSERT_EQ(cuda::device_count(), 2);
  Tensor x = tensor({1.0f, -2.0f}, {}, TensorOptions().device(Device("cuda:0"))).requires_grad_();
  Tensor on1 = x.to(Device("cuda:1")) * 3;  // computed on the second device
  EXPECT_EQ(on1.device(), Device("cuda:1"));
  Tensor back = on1.to(Device("cuda:0"));
  Tensor loss = (back * x).sum();  // x is used on both devices: 3x^2 -> 6x
  loss.backward();
  EXPECT_EQ(x.grad().device(), Device("cuda:0"));
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{6, -12}));
}

TEST(AutogradCudaSim, CpuLeafThroughDevice) {
  ASSERT_TRUE(kEnvSet);
  Tensor w = tensor({0.5f, 1.5f}, {}, kFloat32).requires_grad_();
  Tensor loss = (w.cuda() * 2).sum();
  loss.backward();
  EXPECT_TRUE(w.grad().is_cpu());
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{2, 2}));
}
