// Convolution through the emulated cuDNN: conv1d/conv2d/conv_transpose2d forward and backward
// equal the im2col path and the CPU (float32, float16, bfloat16; groups, stride, dilation,
// padding); the switches (enabled, benchmark, deterministic), TF32, the workspace accounting,
// the fallbacks (asymmetric padding, cuDNN off or absent) and how cuDNN errors are reported.
#include <cudnn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "ember/ember.h"
#include "simt/cudnn_shim.h"

using namespace ember;
namespace F = ember::nn::functional;
namespace cudnn = ember::backends::cudnn;

namespace {

const Device kDev("cuda:0");

bool cudnn_absent_by_env() {
  const char* v = std::getenv("EMBER_CUDNN_LIBRARY");
  return v != nullptr && std::string(v) == "none";
}

// A convolution under test: its inputs (x, w, optional bias) and the call.
struct ConvCall {
  std::string name;
  Shape x, w;
  bool bias;
  std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> fn;
};

std::vector<ConvCall> calls() {
  return {
      {"conv2d groups stride pad dilation",
       {2, 4, 7, 6},
       {6, 2, 3, 2},
       true,
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         return F::conv2d(x, w, b, {2, 1}, {1, 0}, {1, 2}, 2);
       }},
      {"conv2d depthwise",
       {2, 3, 5, 5},
       {3, 1, 3, 3},
       false,
       [](const Tensor& x, const Tensor& w, const Tensor&) {
         return F::conv2d(x, w, {}, 2, 1, 1, 3);
       }},
      {"conv1d",
       {2, 4, 9},
       {6, 2, 3},
       true,
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         return F::conv1d(x, w, b, 2, 1, 1, 2);
       }},
      {"conv_transpose2d output_padding groups",
       {2, 4, 3, 4},
       {4, 2, 3, 3},
       true,
       [](const Tensor& x, const Tensor& w, const Tensor& b) {
         return F::conv_transpose2d(x, w, b, 2, 1, {1, 0}, 2);
       }},
      {"conv_transpose2d dilated",
       {1, 2, 3, 3},
       {2, 3, 2, 3},
       false,
       [](const Tensor& x, const Tensor& w, const Tensor&) {
         return F::conv_transpose2d(x, w, {}, 1, {0, 1}, 0, 1, 2);
       }},
  };
}

// The output and every gradient of sum(y * g) for fixed g, on dev in dtype (as float64 on the
// host).
TensorList run(const ConvCall& c, DType dtype, Device dev, uint64_t seed) {
  manual_seed(seed);
  const Tensor x0 = randn(c.x), w0 = randn(c.w);
  const Tensor b0 =
      c.bias ? randn({c.name.rfind("conv_transpose", 0) == 0 ? c.w[1] * 2 : c.w[0]}) : Tensor();
  auto leaf = [&](const Tensor& t) {
    return t.defined() ? t.to(dtype).to(dev).detach().requires_grad_(true) : t;
  };
  Tensor x = leaf(x0), w = leaf(w0), b = leaf(b0);
  Tensor y = c.fn(x, w, b);
  manual_seed(seed + 1);
  const Tensor g = randn(y.sizes()).to(dtype).to(dev);
  (y * g).sum().backward();
  TensorList out{y, x.grad(), w.grad()};
  if (b.defined()) out.push_back(b.grad());
  for (Tensor& t : out) t = t.cpu().to(kFloat64);
  return out;
}

double tolerance(DType t) { return t == kFloat32 ? 1e-4 : t == kFloat16 ? 2e-2 : 8e-2; }

class CudnnConv : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (cudnn_absent_by_env()) GTEST_SKIP() << "cuDNN made absent by EMBER_CUDNN_LIBRARY=none";
  }
};

}  // namespace

TEST(CudnnSim, AvailableAndEnabledByDefault) {
  if (cudnn_absent_by_env()) GTEST_SKIP() << "cuDNN made absent by EMBER_CUDNN_LIBRARY=none";
  EXPECT_TRUE(cudnn::is_available());
  EXPECT_TRUE(cudnn::enabled());
  EXPECT_FALSE(cudnn::benchmark());
  EXPECT_FALSE(cudnn::deterministic());
}

TEST_P(CudnnConv, EqualsIm2colAndCpuForwardAndBackward) {
  const DType dt = GetParam();
  for (const ConvCall& c : calls()) {
    SCOPED_TRACE(c.name);
    const TensorList cpu = run(c, dt, Device(kCPU), 11);
    const uint64_t before = simt::cudnn_conv_count();
    const TensorList dnn = run(c, dt, kDev, 11);
    // Forward, backward data and backward filter each ran once in cuDNN.
    EXPECT_EQ(simt::cudnn_conv_count() - before, 3u);
    TensorList im2col;
    {
      cudnn::FlagsGuard off(false, false, false);
      const uint64_t at = simt::cudnn_conv_count();
      im2col = run(c, dt, kDev, 11);
      EXPECT_EQ(simt::cudnn_conv_count(), at) << "cuDNN ran while disabled";
    }
    const char* names[] = {"output", "grad input", "grad weight", "grad bias"};
    for (size_t i = 0; i < cpu.size(); ++i) {
      ASSERT_EQ(dnn[i].sizes(), cpu[i].sizes()) << names[i];
      const double tol = tolerance(dt);
      EXPECT_TRUE(allclose(dnn[i], cpu[i], tol, tol))
          << names[i] << " cuDNN vs CPU\n"
          << (dnn[i] - cpu[i]).abs().max().item<double>();
      EXPECT_TRUE(allclose(dnn[i], im2col[i], tol, tol)) << names[i] << " cuDNN vs im2col";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, CudnnConv, ::testing::Values(kFloat32, kFloat16, kBFloat16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(CudnnSim, TellsCudnnTheGroupsMathAndDataType) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  const Tensor x = randn({1, 6, 5, 5}, TensorOptions().device(kDev));
  const Tensor w = randn({9, 2, 3, 3}, TensorOptions().device(kDev));
  F::conv2d(x, w, {}, 1, 1, 1, 3);
  cuda::synchronize();
  simt::CudnnConvRecord r = simt::cudnn_last_conv();
  EXPECT_EQ(r.kind, 0);
  EXPECT_EQ(r.groups, 3);
  EXPECT_EQ(r.math_type, CUDNN_FMA_MATH);  // float32 at "highest" precision: no TF32
  EXPECT_EQ(r.data_type, CUDNN_DATA_FLOAT);
  set_float32_matmul_precision("high");
  F::conv2d(x, w, {}, 1, 1, 1, 3);
  cuda::synchronize();
  set_float32_matmul_precision("highest");
  EXPECT_EQ(simt::cudnn_last_conv().math_type, CUDNN_DEFAULT_MATH);
  F::conv2d(x.to(kBFloat16), w.to(kBFloat16), {}, 1, 1, 1, 3);
  cuda::synchronize();
  r = simt::cudnn_last_conv();
  EXPECT_EQ(r.math_type, CUDNN_TENSOR_OP_MATH);
  EXPECT_EQ(r.data_type, CUDNN_DATA_BFLOAT16);
}

TEST(CudnnSim, WorkspaceComesFromTheCachingAllocator) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  const Tensor x = randn({2, 4, 8, 8}, TensorOptions().device(kDev));
  const Tensor w = randn({8, 4, 3, 3}, TensorOptions().device(kDev));
  cuda::synchronize();
  const size_t base = cuda::memory_allocated();
  cuda::reset_peak_memory_stats();
  Tensor y = F::conv2d(x, w, {}, 1, 1);
  cuda::synchronize();
  const simt::CudnnConvRecord r = simt::cudnn_last_conv();
  ASSERT_GT(r.workspace_bytes, 0u);  // the emulated heuristic's first algorithm needs one
  EXPECT_GE(cuda::max_memory_allocated() - base, y.nbytes() + r.workspace_bytes);
}

TEST(CudnnSim, DeterministicAvoidsNondeterministicAlgorithms) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  const Tensor x = randn({2, 2, 6, 6}, TensorOptions().device(kDev)).requires_grad_(true);
  const Tensor w = randn({4, 2, 3, 3}, TensorOptions().device(kDev));
  // Only the input needs a gradient: the last cuDNN call is backward data.
  auto backward_data_algo = [&] {
    Tensor gx = autograd::grad({F::conv2d(x, w, {}, 1, 1).sum()}, {x})[0];
    cuda::synchronize();
    EXPECT_EQ(simt::cudnn_last_conv().kind, 1);
    return simt::cudnn_last_conv().algo;
  };
  EXPECT_EQ(backward_data_algo(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
  cudnn::FlagsGuard det(true, false, true);
  EXPECT_EQ(backward_data_algo(), CUDNN_CONVOLUTION_BWD_DATA_ALGO_1);
}

TEST(CudnnSim, BenchmarkFindsOncePerProblemAndCaches) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  cudnn::FlagsGuard bench(true, true, false);
  manual_seed(3);
  const Tensor x = randn({2, 3, 9, 7}), w = randn({5, 3, 2, 3}), b = randn({5});
  const Tensor want = F::conv2d(x, w, b, 2, {0, 1});
  const uint64_t finds = simt::cudnn_find_count();
  const Tensor got = F::conv2d(x.to(kDev), w.to(kDev), b.to(kDev), 2, {0, 1});
  EXPECT_EQ(simt::cudnn_find_count() - finds, 1u);
  // Finding clobbers its output: the bias already in y must survive it.
  EXPECT_TRUE(allclose(got.cpu(), want, 1e-4, 1e-4));
  F::conv2d(x.to(kDev), w.to(kDev), b.to(kDev), 2, {0, 1});
  EXPECT_EQ(simt::cudnn_find_count() - finds, 1u) << "the choice was not cached";
  F::conv2d(x.to(kDev), w.to(kDev), b.to(kDev), 1, {0, 1});
  EXPECT_EQ(simt::cudnn_find_count() - finds, 2u) << "another stride is another problem";
}

TEST(CudnnSim, AsymmetricPaddingFallsBackToIm2col) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  manual_seed(4);
  const Tensor x = randn({1, 2, 5, 6}), w = randn({3, 2, 4, 2});
  const Tensor want = F::conv2d(x, w, {}, 1, "same", {1, 3});
  const uint64_t before = simt::cudnn_conv_count();
  const Tensor got = F::conv2d(x.to(kDev), w.to(kDev), {}, 1, "same", {1, 3});
  EXPECT_EQ(simt::cudnn_conv_count(), before);
  EXPECT_TRUE(allclose(got.cpu(), want, 1e-4, 1e-4));
}

TEST(CudnnSim, MisalignedOperandFallsBackToIm2col) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  manual_seed(8);
  // One float past a 16-byte boundary: a contiguous view cuDNN is not handed.
  const Tensor flat = randn({1 + 2 * 3 * 6 * 6}), w = randn({4, 3, 3, 3});
  const Tensor x = flat.narrow(0, 1, 2 * 3 * 6 * 6).view({2, 3, 6, 6});
  const Tensor dx = flat.to(kDev).narrow(0, 1, 2 * 3 * 6 * 6).view({2, 3, 6, 6});
  const uint64_t before = simt::cudnn_conv_count();
  const Tensor got = F::conv2d(dx, w.to(kDev), {}, 1, 1);
  EXPECT_EQ(simt::cudnn_conv_count(), before);
  EXPECT_TRUE(allclose(got.cpu(), F::conv2d(x, w, {}, 1, 1), 1e-4, 1e-4));
}

TEST(CudnnSim, ErrorsNameTheOpAndCudnnsStatus) {
  if (cudnn_absent_by_env()) GTEST_SKIP();
  const Tensor x = randn({1, 2, 5}, TensorOptions().device(kDev));
  const Tensor w = randn({3, 2, 3}, TensorOptions().device(kDev));
  simt::cudnn_fail_next_call(CUDNN_STATUS_NOT_SUPPORTED);
  try {
    F::conv1d(x, w);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[conv1d] cuDNN: CUDNN_STATUS_NOT_SUPPORTED"),
              std::string::npos)
        << e.what();
  }
  // The device and cuDNN stay usable.
  EXPECT_EQ(F::conv1d(x, w).sizes(), Shape({1, 3, 3}));
}

// Run with EMBER_CUDNN_LIBRARY=none (a ctest entry of its own): no cuDNN, im2col everywhere.
TEST(CudnnAbsentSim, ConvolutionUsesIm2col) {
  if (!cudnn_absent_by_env()) GTEST_SKIP() << "needs EMBER_CUDNN_LIBRARY=none";
  EXPECT_FALSE(cudnn::is_available());
  manual_seed(6);
  const Tensor x = randn({2, 2, 6, 5}), w = randn({4, 1, 3, 3}), b = randn({4});
  const Tensor got = F::conv2d(x.to(kDev), w.to(kDev), b.to(kDev), 1, 1, 1, 2);
  EXPECT_EQ(simt::cudnn_conv_count(), 0u);
  EXPECT_TRUE(allclose(got.cpu(), F::conv2d(x, w, b, 1, 1, 1, 2), 1e-4, 1e-4));
}
