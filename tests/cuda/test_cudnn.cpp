// Convolution through the real cuDNN against the CPU and against the im2col path on the GPU:
// conv2d with groups, stride, padding and dilation, conv1d and conv_transpose2d, forward and
// backward, in float32, float16 and bfloat16, with the benchmark and deterministic switches.
// Skipped without a GPU, and (with the reason) where cuDNN cannot be loaded.
#include <algorithm>
#include <functional>

#include "cuda/cuda_test.h"

using namespace ember;
using ember::testing::CudaTest;
using ember::testing::max_diff;
namespace F = ember::nn::functional;
namespace cudnn = ember::backends::cudnn;

namespace {

class CudnnTest : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    if (!cudnn::is_available()) {
      GTEST_SKIP() << "cuDNN is not available: " << cuda::library_error("cudnn")
                   << " (set EMBER_CUDNN_LIBRARY to libcudnn.so.9)";
    }
  }
};

// y, grad x, grad w of sum(conv(x, w) * g) in dtype on dev, as float64 on the host.
TensorList conv_grads(const Tensor& x0, const Tensor& w0, DType dt, Device dev,
                      const std::function<Tensor(const Tensor&, const Tensor&)>& conv) {
  Tensor x = x0.to(dt).to(dev).requires_grad_(true);
  Tensor w = w0.to(dt).to(dev).requires_grad_(true);
  Tensor y = conv(x, w);
  manual_seed(99);
  const Tensor g = randn(y.sizes()).to(dt).to(dev);
  (y * g).sum().backward();
  return {y.cpu().to(kFloat64), x.grad().cpu().to(kFloat64), w.grad().cpu().to(kFloat64)};
}

void expect_close(const TensorList& got, const TensorList& want, double rel, const char* what) {
  const char* names[] = {"output", "grad input", "grad weight"};
  for (size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max(1.0, want[i].abs().max().item<double>());
    EXPECT_LE(max_diff(got[i], want[i]), rel * scale) << what << ": " << names[i];
  }
}

}  // namespace

TEST_F(CudnnTest, Conv2dMatchesTheCpuAndIm2col) {
  manual_seed(1);
  const Tensor x = randn({4, 8, 17, 15}), w = randn({12, 4, 3, 5});
  auto conv = [](const Tensor& a, const Tensor& b) {
    return F::conv2d(a, b, {}, {2, 1}, {1, 2}, {1, 2}, 2);
  };
  const TensorList cpu = conv_grads(x.to(kFloat64), w.to(kFloat64), kFloat64, Device(kCPU), conv);
  for (DType dt : {kFloat32, kFloat16, kBFloat16}) {
    SCOPED_TRACE(dtype_name(dt));
    const double rel = dt == kFloat32 ? 1e-4 : dt == kFloat16 ? 1e-2 : 5e-2;
    const TensorList dnn = conv_grads(x, w, dt, gpu(), conv);
    expect_close(dnn, cpu, rel, "cuDNN vs CPU");
    cudnn::FlagsGuard off(false, false, false);
    expect_close(conv_grads(x, w, dt, gpu(), conv), dnn, 2 * rel, "im2col vs cuDNN");
  }
}

TEST_F(CudnnTest, Conv1dAndTransposedMatchTheCpu) {
  manual_seed(2);
  const Tensor x1 = randn({3, 6, 40}), w1 = randn({9, 2, 5});
  auto c1 = [](const Tensor& a, const Tensor& b) { return F::conv1d(a, b, {}, 2, 3, 2, 3); };
  expect_close(conv_grads(x1, w1, kFloat32, gpu(), c1),
               conv_grads(x1.to(kFloat64), w1.to(kFloat64), kFloat64, Device(kCPU), c1), 1e-4,
               "conv1d");
  const Tensor xt = randn({2, 6, 7, 9}), wt = randn({6, 4, 3, 3});
  auto ct = [](const Tensor& a, const Tensor& b) {
    return F::conv_transpose2d(a, b, {}, 2, 1, {1, 0}, 2);
  };
  expect_close(conv_grads(xt, wt, kFloat32, gpu(), ct),
               conv_grads(xt.to(kFloat64), wt.to(kFloat64), kFloat64, Device(kCPU), ct), 1e-4,
               "conv_transpose2d");
}

TEST_F(CudnnTest, BenchmarkAndDeterministicGiveTheSameResults) {
  manual_seed(3);
  const Tensor x = randn({8, 16, 32, 32}), w = randn({32, 16, 3, 3});
  auto conv = [](const Tensor& a, const Tensor& b) { return F::conv2d(a, b, {}, 1, 1); };
  const TensorList base = conv_grads(x, w, kFloat32, gpu(), conv);
  {
    cudnn::FlagsGuard bench(true, true, false);
    expect_close(conv_grads(x, w, kFloat32, gpu(), conv), base, 1e-4, "benchmark");
    expect_close(conv_grads(x, w, kFloat32, gpu(), conv), base, 1e-4, "benchmark, cached");
  }
  cudnn::FlagsGuard det(true, false, true);
  const TensorList d1 = conv_grads(x, w, kFloat32, gpu(), conv);
  const TensorList d2 = conv_grads(x, w, kFloat32, gpu(), conv);
  for (size_t i = 0; i < d1.size(); ++i) EXPECT_EQ(max_diff(d1[i], d2[i]), 0.0) << i;
  expect_close(d1, base, 1e-4, "deterministic");
}
