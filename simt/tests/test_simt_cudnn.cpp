// The emulated cuDNN: grouped, strided, padded, dilated convolutions forward and backward against
// a direct loop, alpha/beta, and the checks (descriptors, groups, output sizes, workspace size,
// handles, memory) that must refuse a wrong call.
// clang-format off
// test_util.h first: it brings in the emulator's CUDA qualifiers before any CUDA header.
#include "test_util.h"
// clang-format on

#include <cudnn.h>

#include <cmath>
#include <vector>

#include "simt/cudnn_shim.h"

namespace {

#define ASSERT_DNN_OK(call) ASSERT_EQ((call), CUDNN_STATUS_SUCCESS) << simt::cudnn_last_message()

std::vector<float> values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = std::fmod(static_cast<float>(i) * 0.37f, 3.0f) * scale - 1.0f;
  return v;
}

// One problem: x (N, C, H, W), w (K, C / G, R, S), pad 1/0, stride 2/1, dilation 1/2.
struct Conv : ::testing::Test {
  int N = 2, C = 4, H = 7, W = 6, K = 6, G = 2, R = 3, S = 2;
  int pad[2] = {1, 0}, stride[2] = {2, 1}, dil[2] = {1, 2};
  int OH = 0, OW = 0;
  cudnnHandle_t handle = nullptr;
  cudnnTensorDescriptor_t xd = nullptr, yd = nullptr;
  cudnnFilterDescriptor_t wd = nullptr;
  cudnnConvolutionDescriptor_t cd = nullptr;

  void SetUp() override {
    OH = (H + 2 * pad[0] - dil[0] * (R - 1) - 1) / stride[0] + 1;
    OW = (W + 2 * pad[1] - dil[1] * (S - 1) - 1) / stride[1] + 1;
    ASSERT_DNN_OK(cudnnCreate(&handle));
    ASSERT_DNN_OK(cudnnCreateTensorDescriptor(&xd));
    ASSERT_DNN_OK(cudnnCreateTensorDescriptor(&yd));
    ASSERT_DNN_OK(cudnnCreateFilterDescriptor(&wd));
    ASSERT_DNN_OK(cudnnCreateConvolutionDescriptor(&cd));
    set_tensor(xd, N, C, H, W);
    set_tensor(yd, N, K, OH, OW);
    const int wdims[4] = {K, C / G, R, S};
    ASSERT_DNN_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wdims));
    ASSERT_DNN_OK(cudnnSetConvolutionNdDescriptor(cd, 2, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                  CUDNN_DATA_FLOAT));
    ASSERT_DNN_OK(cudnnSetConvolutionGroupCount(cd, G));
    ASSERT_DNN_OK(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH));
  }
  void TearDown() override {
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(xd);
    cudnnDestroy(handle);
  }
  static void set_tensor(cudnnTensorDescriptor_t d, int n, int c, int h, int w) {
    const int dims[4] = {n, c, h, w}, strides[4] = {c * h * w, h * w, w, 1};
    ASSERT_DNN_OK(cudnnSetTensorNdDescriptor(d, CUDNN_DATA_FLOAT, 4, dims, strides));
  }

  // The direct definition: y[n][k][oh][ow] = sum x[n][g * C/G + c][ih][iw] * w[k][c][r][s].
  std::vector<double> reference(const std::vector<float>& x, const std::vector<float>& w) const {
    std::vector<double> y(static_cast<size_t>(N) * K * OH * OW, 0.0);
    const int cg = C / G, kg = K / G;
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        for (int oh = 0; oh < OH; ++oh)
          for (int ow = 0; ow < OW; ++ow) {
            double acc = 0;
            for (int c = 0; c < cg; ++c)
              for (int r = 0; r < R; ++r)
                for (int s = 0; s < S; ++s) {
                  const int ih = oh * stride[0] - pad[0] + r * dil[0];
                  const int iw = ow * stride[1] - pad[1] + s * dil[1];
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  const int ci = k / kg * cg + c;
                  acc += x[((n * C + ci) * H + ih) * W + iw] * w[((k * cg + c) * R + r) * S + s];
                }
            y[((n * K + k) * OH + oh) * OW + ow] = acc;
          }
    return y;
  }
};

TEST_F(Conv, ForwardMatchesTheDefinitionWithWorkspaceAndBeta) {
  const auto hx = values(static_cast<size_t>(N) * C * H * W, 1.0f);
  const auto hw = values(static_cast<size_t>(K) * (C / G) * R * S, 0.5f);
  const auto hy = values(static_cast<size_t>(N) * K * OH * OW, 2.0f);
  DeviceBuffer<float> x(hx), w(hw), y(hy);
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int returned = 0;
  ASSERT_DNN_OK(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 8, &returned, perf));
  ASSERT_GT(returned, 0);
  size_t ws_size = 0;
  ASSERT_DNN_OK(
      cudnnGetConvolutionForwardWorkspaceSize(handle, xd, wd, cd, yd, perf[0].algo, &ws_size));
  EXPECT_EQ(ws_size, perf[0].memory);
  ASSERT_GT(ws_size, 0u);  // the first algorithm needs a workspace
  DeviceBuffer<unsigned char> ws(ws_size);
  const float alpha = 1.5f, beta = -0.5f;
  ASSERT_DNN_OK(cudnnConvolutionForward(handle, &alpha, xd, x.get(), wd, w.get(), cd, perf[0].algo,
                                        ws.get(), ws_size, &beta, yd, y.get()));
  const auto got = y.download();
  const auto ref = reference(hx, hw);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], alpha * ref[i] + beta * hy[i], 1e-4) << i;
  EXPECT_EQ(simt::cudnn_last_conv().groups, G);
  EXPECT_EQ(simt::cudnn_last_conv().math_type, CUDNN_FMA_MATH);

  // A workspace smaller than reported is refused, and so is a made-up handle.
  EXPECT_EQ(cudnnConvolutionForward(handle, &alpha, xd, x.get(), wd, w.get(), cd, perf[0].algo,
                                    ws.get(), ws_size - 1, &beta, yd, y.get()),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_NE(simt::cudnn_last_message().find("workspace"), std::string::npos);
  int bogus = 0;
  EXPECT_EQ(
      cudnnConvolutionForward(reinterpret_cast<cudnnHandle_t>(&bogus), &alpha, xd, x.get(), wd,
                              w.get(), cd, perf[0].algo, ws.get(), ws_size, &beta, yd, y.get()),
      CUDNN_STATUS_BAD_PARAM);
  // Host memory where device memory is expected.
  std::vector<float> host(hx);
  EXPECT_EQ(cudnnConvolutionForward(handle, &alpha, xd, host.data(), wd, w.get(), cd, perf[0].algo,
                                    ws.get(), ws_size, &beta, yd, y.get()),
            CUDNN_STATUS_EXECUTION_FAILED);
}

TEST_F(Conv, BackwardDataAndFilterAreTheAdjoints) {
  // <conv(x, w), dy> = <x, dgrad(dy, w)> = <w, wgrad(x, dy)>.
  const auto hx = values(static_cast<size_t>(N) * C * H * W, 1.0f);
  const auto hw = values(static_cast<size_t>(K) * (C / G) * R * S, 0.5f);
  const auto hdy = values(static_cast<size_t>(N) * K * OH * OW, 0.7f);
  DeviceBuffer<float> x(hx), w(hw), dy(hdy), dx(hx.size()), dw(hw.size());
  const float one = 1.0f, zero = 0.0f;
  cudnnConvolutionBwdDataAlgoPerf_t dperf[4];
  cudnnConvolutionBwdFilterAlgoPerf_t fperf[4];
  int n = 0;
  ASSERT_DNN_OK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, wd, yd, cd, xd, 4, &n, dperf));
  for (int i = 0; i < n; ++i) {
    DeviceBuffer<unsigned char> ws(dperf[i].memory + 1);
    ASSERT_DNN_OK(cudnnConvolutionBackwardData(handle, &one, wd, w.get(), yd, dy.get(), cd,
                                               dperf[i].algo, ws.get(), dperf[i].memory, &zero, xd,
                                               dx.get()));
  }
  ASSERT_DNN_OK(
      cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, xd, yd, cd, wd, 4, &n, fperf));
  DeviceBuffer<unsigned char> fws(fperf[0].memory + 1);
  ASSERT_DNN_OK(cudnnConvolutionBackwardFilter(handle, &one, xd, x.get(), yd, dy.get(), cd,
                                               fperf[0].algo, fws.get(), fperf[0].memory, &zero, wd,
                                               dw.get()));
  const auto y = reference(hx, hw);
  const auto gx = dx.download(), gw = dw.download();
  double lhs = 0, rx = 0, rw = 0;
  for (size_t i = 0; i < y.size(); ++i) lhs += y[i] * hdy[i];
  for (size_t i = 0; i < gx.size(); ++i) rx += double(hx[i]) * gx[i];
  for (size_t i = 0; i < gw.size(); ++i) rw += double(hw[i]) * gw[i];
  EXPECT_NEAR(rx, lhs, 1e-3 * std::abs(lhs) + 1e-3);
  EXPECT_NEAR(rw, lhs, 1e-3 * std::abs(lhs) + 1e-3);
  EXPECT_EQ(simt::cudnn_last_conv().kind, 2);
}

TEST_F(Conv, RejectsBadDescriptors) {
  cudnnConvolutionFwdAlgoPerf_t perf[4];
  int n = 0;
  // The group count does not match the channels: x has 4, the filter 2 per group x 4 groups.
  ASSERT_DNN_OK(cudnnSetConvolutionGroupCount(cd, 4));
  EXPECT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 4, &n, perf),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_NE(simt::cudnn_last_message().find("channels"), std::string::npos);
  ASSERT_DNN_OK(cudnnSetConvolutionGroupCount(cd, G));
  // A filter laid out (C / G, K, R, S) instead of (K, C / G, R, S).
  const int swapped[4] = {C / G, K, R, S};
  ASSERT_DNN_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, swapped));
  EXPECT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 4, &n, perf),
            CUDNN_STATUS_BAD_PARAM);
  // An output size that is not the convolution's.
  const int wdims[4] = {K, C / G, R, S};
  ASSERT_DNN_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wdims));
  set_tensor(yd, N, K, OH + 1, OW);
  EXPECT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 4, &n, perf),
            CUDNN_STATUS_BAD_PARAM);
  // Mixed data types, a non-positive dim, and a destroyed descriptor.
  set_tensor(yd, N, K, OH, OW);
  const int dims[4] = {N, C, H, W}, strides[4] = {C * H * W, H * W, W, 1};
  ASSERT_DNN_OK(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_HALF, 4, dims, strides));
  EXPECT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(handle, xd, wd, cd, yd, 4, &n, perf),
            CUDNN_STATUS_BAD_PARAM);
  const int zero_dims[4] = {0, C, H, W};
  EXPECT_EQ(cudnnSetTensorNdDescriptor(xd, CUDNN_DATA_FLOAT, 4, zero_dims, strides),
            CUDNN_STATUS_BAD_PARAM);
  cudnnTensorDescriptor_t gone = nullptr;
  ASSERT_DNN_OK(cudnnCreateTensorDescriptor(&gone));
  ASSERT_DNN_OK(cudnnDestroyTensorDescriptor(gone));
  EXPECT_EQ(cudnnGetConvolutionForwardAlgorithm_v7(handle, gone, wd, cd, yd, 4, &n, perf),
            CUDNN_STATUS_BAD_PARAM);
  EXPECT_EQ(cudnnSetStream(handle, reinterpret_cast<cudaStream_t>(&n)), CUDNN_STATUS_BAD_PARAM);
  EXPECT_STREQ(cudnnGetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
}

TEST_F(Conv, ConvolutionModeFlipsTheFilterAndDefaultMathRoundsToTf32) {
  // One 1x1 image, a 1x2 filter over a 1x2 image with no padding: cross-correlation gives
  // x0 w0 + x1 w1, convolution x0 w1 + x1 w0.
  N = 1;
  C = 1;
  K = 1;
  G = 1;
  H = 1;
  W = 2;
  R = 1;
  S = 2;
  const int p[2] = {0, 0}, st[2] = {1, 1}, d[2] = {1, 1};
  set_tensor(xd, 1, 1, 1, 2);
  set_tensor(yd, 1, 1, 1, 1);
  const int wdims[4] = {1, 1, 1, 2};
  ASSERT_DNN_OK(cudnnSetFilterNdDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 4, wdims));
  ASSERT_DNN_OK(cudnnSetConvolutionGroupCount(cd, 1));
  const float e = 1.0f + 1.0f / 4096.0f;  // exact in float, 1 in TF32
  DeviceBuffer<float> x(std::vector<float>{e, 2.0f}), w(std::vector<float>{1.0f, 10.0f}), y(1);
  const float one = 1.0f, zero = 0.0f;
  auto run = [&](cudnnConvolutionMode_t mode, cudnnMathType_t math) {
    EXPECT_EQ(cudnnSetConvolutionNdDescriptor(cd, 2, p, st, d, mode, CUDNN_DATA_FLOAT),
              CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnSetConvolutionMathType(cd, math), CUDNN_STATUS_SUCCESS);
    EXPECT_EQ(cudnnConvolutionForward(handle, &one, xd, x.get(), wd, w.get(), cd,
                                      CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, nullptr, 0, &zero,
                                      yd, y.get()),
              CUDNN_STATUS_SUCCESS)
        << simt::cudnn_last_message();
    return y.download()[0];
  };
  EXPECT_FLOAT_EQ(run(CUDNN_CROSS_CORRELATION, CUDNN_FMA_MATH), e + 20.0f);
  EXPECT_FLOAT_EQ(run(CUDNN_CONVOLUTION, CUDNN_FMA_MATH), 10.0f * e + 2.0f);
  EXPECT_EQ(run(CUDNN_CROSS_CORRELATION, CUDNN_DEFAULT_MATH), 21.0f);
}

}  // namespace
