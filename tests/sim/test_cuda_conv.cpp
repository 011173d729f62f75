// Convolution and pooling on the emulated CUDA device: a small CNN step matches the CPU (values
// and gradients), mixed devices raise PyTorch's error, and a conv net trains on the device.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;
namespace F = ember::nn::functional;

namespace {

const Device kDev("cuda:0");

// conv -> relu -> max_pool -> conv -> adaptive_avg_pool -> sum, with every gradient.
TensorList forward_backward(const Tensor& x0, const Tensor& w10, const Tensor& b10,
                            const Tensor& w20, Device dev) {
  // Fresh leaves on dev (to(kCPU) alone would hand back the caller's tensors).
  auto leaf = [dev](const Tensor& t) { return t.detach().to(dev).requires_grad_(true); };
  Tensor x = leaf(x0), w1 = leaf(w10), b1 = leaf(b10), w2 = leaf(w20);
  Tensor h = F::max_pool2d(relu(F::conv2d(x, w1, b1, 1, 1)), 2);
  Tensor y = F::adaptive_avg_pool2d(F::conv2d(h, w2, {}, 2, "valid", 1, 2), {2, 2});
  Tensor loss = (y * y).sum();
  loss.backward();
  return {y.cpu(), x.grad().cpu(), w1.grad().cpu(), b1.grad().cpu(), w2.grad().cpu()};
}

}  // namespace

TEST(CudaConvSim, SmallCnnMatchesCpu) {
  manual_seed(5);
  const Tensor x = randn({3, 2, 12, 10}), w1 = randn({4, 2, 3, 3}), b1 = randn({4});
  const Tensor w2 = randn({6, 2, 2, 2});
  const TensorList cpu = forward_backward(x, w1, b1, w2, Device(kCPU));
  const TensorList dev = forward_backward(x, w1, b1, w2, kDev);
  const char* names[] = {"output", "grad x", "grad w1", "grad b1", "grad w2"};
  for (size_t i = 0; i < cpu.size(); ++i) {
    EXPECT_EQ(cpu[i].sizes(), dev[i].sizes()) << names[i];
    EXPECT_TRUE(allclose(cpu[i], dev[i], 1e-4, 1e-4)) << names[i];
  }
}

TEST(CudaConvSim, MixedDevicesRaise) {
  const Tensor x = randn({1, 1, 5, 5}, TensorOptions().device(kDev));
  const Tensor w = randn({2, 1, 3, 3});
  try {
    F::conv2d(x, w);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[conv2d] Expected all tensors to be on the same device"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaConvSim, ConvNetTrainsOnDevice) {
  manual_seed(7);
  nn::Conv2d conv(nn::Conv2dOptions(1, 4, 3).padding(1));
  nn::Linear fc(4 * 3 * 3, 2);
  conv->to(kDev);
  fc->to(kDev);
  TensorList params = conv->parameters();
  for (const Tensor& p : fc->parameters()) params.push_back(p);
  const Tensor x = randn({4, 1, 6, 6}, TensorOptions().device(kDev));
  const Tensor target = randn({4, 2}, TensorOptions().device(kDev));
  auto loss_fn = [&] {
    Tensor out = fc(F::max_pool2d(relu(conv(x)), 2).flatten(1));
    return ((out - target) * (out - target)).mean();
  };
  const double first = loss_fn().item<double>();
  double last = first;
  for (int step = 0; step < 20; ++step) {
    for (Tensor& p : params) p.mutable_grad() = Tensor();
    Tensor loss = loss_fn();
    loss.backward();
    NoGradGuard g;
    for (Tensor& p : params) p.sub_(p.grad() * 0.1);
    last = loss.item<double>();
  }
  EXPECT_LT(last, 0.7 * first) << "first " << first << ", last " << last;
}
