// Convolution and pooling modules: shapes, PyTorch's initialisation bounds and reprs, "same"
// padding, error messages, and a tiny conv net trained by hand-written SGD steps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = ember::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream s;
  s << m;
  return s.str();
}

double max_abs(const Tensor& t) { return t.abs().max().item<double>(); }

}  // namespace

TEST(NnConv, Conv2dShapesAndInit) {
  manual_seed(0);
  nn::Conv2d conv(nn::Conv2dOptions(1, 32, 3).padding(1));
  EXPECT_EQ(conv->weight.sizes(), (Shape{32, 1, 3, 3}));
  EXPECT_EQ(conv->bias.sizes(), (Shape{32}));
  EXPECT_EQ(conv->parameters().size(), 2u);
  // kaiming_uniform_(a = sqrt(5)) and the bias both draw from +-1/sqrt(fan_in), fan_in = 9.
  const double bound = 1.0 / 3.0;
  EXPECT_LE(max_abs(conv->weight), bound);
  EXPECT_GT(max_abs(conv->weight), 0.8 * bound);
  EXPECT_LE(max_abs(conv->bias), bound);
  EXPECT_GT(max_abs(conv->bias), 0.5 * bound);
  EXPECT_EQ(conv(randn({4, 1, 28, 28})).sizes(), (Shape{4, 32, 28, 28}));
  EXPECT_EQ(conv(randn({1, 9, 7})).sizes(), (Shape{32, 9, 7}));  // unbatched

  nn::Conv2d grouped(nn::Conv2dOptions(4, 6, {3, 2}).stride(2).groups(2).bias(false));
  EXPECT_EQ(grouped->weight.sizes(), (Shape{6, 2, 3, 2}));
  EXPECT_FALSE(grouped->bias.defined());
  EXPECT_EQ(grouped->parameters().size(), 1u);
  EXPECT_LE(max_abs(grouped->weight), 1.0 / std::sqrt(12.0));
  EXPECT_EQ(grouped(randn({2, 4, 9, 8})).sizes(), (Shape{2, 6, 4, 4}));

  nn::Conv1d c1(nn::Conv1dOptions(3, 5, 3).stride(2));
  EXPECT_EQ(c1->weight.sizes(), (Shape{5, 3, 3}));
  EXPECT_EQ(c1(randn({2, 3, 11})).sizes(), (Shape{2, 5, 5}));

  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(8, 4, 2).stride(2));
  EXPECT_EQ(up->weight.sizes(), (Shape{8, 4, 2, 2}));
  // fan_in of a transposed weight is its dim 1 times the kernel: 4 * 4.
  EXPECT_LE(max_abs(up->bias), 0.25);
  EXPECT_EQ(up(randn({2, 8, 5, 6})).sizes(), (Shape{2, 4, 10, 12}));
}

TEST(NnConv, Reprs) {
  EXPECT_EQ(repr(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1))),
            "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
  EXPECT_EQ(repr(nn::Conv2d(nn::Conv2dOptions(32, 64, 3))),
            "Conv2d(32, 64, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(repr(nn::Conv2d(
                nn::Conv2dOptions(4, 6, {3, 5}).stride({2, 1}).dilation(2).groups(2).bias(false))),
            "Conv2d(4, 6, kernel_size=(3, 5), stride=(2, 1), dilation=(2, 2), groups=2, "
            "bias=False)");
  EXPECT_EQ(repr(nn::Conv2d(nn::Conv2dOptions(2, 2, 3).padding("same"))),
            "Conv2d(2, 2, kernel_size=(3, 3), stride=(1, 1), padding=same)");
  EXPECT_EQ(repr(nn::Conv1d(nn::Conv1dOptions(2, 4, 3))),
            "Conv1d(2, 4, kernel_size=(3,), stride=(1,))");
  EXPECT_EQ(repr(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 33, 3).stride(2))),
            "ConvTranspose2d(16, 33, kernel_size=(3, 3), stride=(2, 2))");
  EXPECT_EQ(repr(nn::MaxPool2d(nn::MaxPool2dOptions(2))),
            "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(nn::MaxPool2d(nn::MaxPool2dOptions({3, 2}).stride(1).ceil_mode(true))),
            "MaxPool2d(kernel_size=(3, 2), stride=1, padding=0, dilation=1, ceil_mode=True)");
  EXPECT_EQ(repr(nn::AvgPool2d(nn::AvgPool2dOptions(2))),
            "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(repr(nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({1, 1}))),
            "AdaptiveAvgPool2d(output_size=(1, 1))");
}

TEST(NnConv, SamePadding) {
  manual_seed(1);
  const Tensor x = randn({2, 2, 7, 6});
  // Odd kernel: "same" is the symmetric padding k / 2.
  nn::Conv2d odd(nn::Conv2dOptions(2, 3, 3).padding("same"));
  EXPECT_TRUE(allclose(odd(x), F::conv2d(x, odd->weight, odd->bias, 1, 1), 1e-5, 1e-6));
  // Kernel 4 x 3: rows get 1 on top and 2 below, as PyTorch puts the odd extra at the end; it
  // equals the symmetric padding (2, 1) without the first output row.
  nn::Conv2d even(nn::Conv2dOptions(2, 3, {4, 3}).padding("same"));
  const Tensor y = even(x);
  ASSERT_EQ(y.sizes(), (Shape{2, 3, 7, 6}));
  EXPECT_TRUE(
      allclose(y, F::conv2d(x, even->weight, even->bias, 1, {2, 1}).narrow(2, 1, 7), 1e-5, 1e-6));
  // Dilation widens the window; "valid" is no padding.
  nn::Conv2d dil(nn::Conv2dOptions(2, 3, 3).padding("same").dilation(2));
  EXPECT_EQ(dil(x).sizes(), (Shape{2, 3, 7, 6}));
  EXPECT_EQ(F::conv2d(x, even->weight, {}, 1, "valid").sizes(), (Shape{2, 3, 4, 4}));
  nn::Conv1d c1(nn::Conv1dOptions(2, 2, 4).padding("same"));
  EXPECT_EQ(c1(randn({1, 2, 9})).sizes(), (Shape{1, 2, 9}));
}

TEST(NnConv, ErrorMessages) {
  const Tensor w = randn({32, 1, 3, 3});
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({64, 3, 28, 28}), w);
            }),
            "[conv2d] Given groups=1, weight of size [32, 1, 3, 3], expected input[64, 3, 28, 28] "
            "to have 1 channels, but got 3 channels instead");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({1, 1, 2, 2}), w);
            }),
            "[conv2d] Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
            "Kernel size can't be greater than actual input size");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({1, 1, 5, 5}), w, {}, 0);
            }),
            "[conv2d] non-positive stride is not supported");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({1, 1, 5, 5}), w, {}, 1, -1);
            }),
            "[conv2d] negative padding is not supported");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({5, 5}), w);
            }),
            "[conv2d] Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of "
            "size: [5, 5]");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({1, 1, 5, 5}), w, randn({16}));
            }),
            "[conv2d] Given weight of size [32, 1, 3, 3], expected bias to be 1-dimensional with "
            "32 elements, but got bias of size [16] instead");
  EXPECT_EQ(error_of([&] {
              F::conv2d(randn({1, 1, 5, 5}), w, {}, 2, "same");
            }),
            "[conv2d] padding='same' is not supported for strided convolutions");
  EXPECT_NE(error_of([&] {
              F::conv2d(randn({1, 1, 5, 5}, TensorOptions(kFloat64)), w);
            }).find("should be the same"),
            std::string::npos);
  EXPECT_THROW(F::conv2d(ones({1, 1, 5, 5}, TensorOptions(kInt64)),
                         ones({1, 1, 3, 3}, TensorOptions(kInt64))),
               NotImplementedError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding_mode("reflect")), NotImplementedError);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 2, 3).groups(2)), ValueError);
  EXPECT_EQ(error_of([&] {
              F::max_pool2d(randn({1, 1, 2, 2}), 3, 1);
            }),
            "[max_pool2d] Given input size: (1x2x2). Calculated output size: (1x0x0). Output size "
            "is too small");
  EXPECT_EQ(error_of([&] {
              F::max_pool2d(randn({1, 1, 4, 4}), 2, 1, 2);
            }),
            "[max_pool2d] pad should be at most half of effective kernel size, but got pad=2, "
            "kernel_size=2 and dilation=1");
  EXPECT_NE(error_of([&] {
              F::avg_pool2d(randn({4, 4}), 2);
            }).find("[avg_pool2d] Expected 3D or 4D"),
            std::string::npos);
  if (cuda::is_available()) {
    EXPECT_NE(error_of([&] {
                F::conv2d(randn({1, 1, 5, 5}).to(Device(kCUDA, 0)), w);
              }).find("Expected all tensors to be on the same device"),
              std::string::npos);
  }
}

TEST(NnConv, Pooling) {
  // 4 x 4 plane 0..15: 2 x 2 windows pick the bottom-right of each block.
  const Tensor x = arange(16, TensorOptions(kFloat32)).view({1, 1, 4, 4});
  nn::MaxPool2d pool(nn::MaxPool2dOptions(2));
  auto [v, i] = pool->forward_with_indices(x);
  EXPECT_EQ(v.view({4}).to_vector<float>(), (std::vector<float>{5, 7, 13, 15}));
  EXPECT_EQ(i.dtype(), kInt64);
  EXPECT_EQ(i.view({4}).to_vector<int64_t>(), (std::vector<int64_t>{5, 7, 13, 15}));
  nn::AvgPool2d avg(nn::AvgPool2dOptions(2));
  EXPECT_EQ(avg(x).view({4}).to_vector<float>(), (std::vector<float>{2.5, 4.5, 10.5, 12.5}));
  nn::AdaptiveAvgPool2d gap(nn::AdaptiveAvgPool2dOptions({1, 1}));
  const Tensor r = randn({3, 5, 6, 7});
  EXPECT_TRUE(allclose(gap(r).view({3, 5}), r.mean({2, 3}), 1e-5, 1e-6));
  // Max pool gradient goes to the maxima only.
  Tensor xl = x.clone().requires_grad_(true);
  pool(xl).sum().backward();
  std::vector<float> want(16, 0.f);
  for (int k : {5, 7, 13, 15}) want[k] = 1.f;
  EXPECT_EQ(xl.grad().view({16}).to_vector<float>(), want);
}

// Windows that tile the input take the CPU's row kernel for float32; float64 takes the generic
// loop. Both give the same values and indices: the first maximum on ties, NaN propagates (the
// first NaN's index), a window of -inf points at its first element.
TEST(NnConv, MaxPoolTiledMatchesGenericPath) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const Tensor x = tensor(std::vector<float>{1,    1,    2,   3,   9,  //
                                             1,    1,    nan, 7,   9,  //
                                             -inf, -inf, 5,   nan, 0,  //
                                             -inf, -inf, nan, 5,   0},
                          {1, 1, 4, 5});
  auto [v, i] = F::max_pool2d_with_indices(x, 2);
  EXPECT_EQ(i.view({4}).to_vector<int64_t>(), (std::vector<int64_t>{0, 7, 10, 13}));
  const std::vector<float> got = v.view({4}).to_vector<float>();
  EXPECT_EQ(got[0], 1.f);
  EXPECT_TRUE(std::isnan(got[1]));
  EXPECT_EQ(got[2], -inf);
  EXPECT_TRUE(std::isnan(got[3]));
  // Random planes with many ties (values rounded to a few levels) and some NaNs, odd sizes.
  manual_seed(5);
  Tensor r = round(randn({3, 4, 11, 13}) * 2);
  r = where(randn({3, 4, 11, 13}) > 2.0, full({3, 4, 11, 13}, nan), r);
  for (auto [kh, kw] : {std::pair<int64_t, int64_t>{2, 2}, {3, 3}, {2, 3}, {1, 4}}) {
    auto [vf, if_] = F::max_pool2d_with_indices(r, {kh, kw});
    auto [vd, id] = F::max_pool2d_with_indices(r.to(kFloat64), {kh, kw});
    EXPECT_EQ(if_.to_vector<int64_t>(), id.to_vector<int64_t>()) << kh << "x" << kw;
    const std::vector<float> a = vf.to_vector<float>();
    const std::vector<double> b = vd.to_vector<double>();
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      if (std::isnan(b[k])) {
        EXPECT_TRUE(std::isnan(a[k])) << k;
      } else {
        EXPECT_EQ(a[k], static_cast<float>(b[k])) << k;
      }
    }
  }
}

// conv2d's output and its three gradients against a direct float64 loop, over geometries that
// take each CPU path: the shifted whole-tap copies of stride-1 "same"-width convolutions (3x3,
// 5x5, dilated, 3x1, 1x3, images one pixel wide or high), the row-by-row copies (strides,
// no padding, asymmetric padding), groups, and with and without a bias (folded into the gemm).
TEST(NnConv, Conv2dGeometriesMatchDirectLoop) {
  struct Geo {
    int64_t c, h, w, o, kh, kw, sh, sw, ph, pw, dh, dw, groups;
  };
  const Geo geos[] = {
      {3, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {2, 6, 7, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1},
      {2, 7, 6, 2, 3, 3, 1, 1, 2, 2, 2, 2, 1}, {3, 6, 5, 2, 3, 1, 1, 1, 0, 0, 1, 1, 1},
      {2, 4, 6, 3, 1, 3, 1, 1, 0, 1, 1, 1, 1}, {2, 5, 1, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},
      {2, 1, 5, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1}, {3, 7, 8, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1},
      {3, 6, 6, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1}, {2, 6, 7, 3, 3, 3, 1, 1, 0, 1, 1, 1, 1},
      {4, 5, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 2},
  };
  manual_seed(11);
  for (const Geo& g : geos) {
    for (bool with_bias : {true, false}) {
      const int64_t n = 3, cg = g.c / g.groups, og = g.o / g.groups;
      Tensor x = randn({n, g.c, g.h, g.w}, TensorOptions().requires_grad(true));
      Tensor w = randn({g.o, cg, g.kh, g.kw}, TensorOptions().requires_grad(true));
      Tensor b = with_bias ? randn({g.o}, TensorOptions().requires_grad(true)) : Tensor();
      Tensor y = F::conv2d(x, w, b, {g.sh, g.sw}, {g.ph, g.pw}, {g.dh, g.dw}, g.groups);
      const int64_t oh = y.size(2), ow = y.size(3);
      const Tensor r = randn(y.sizes());
      (y * r).sum().backward();

      const std::vector<double> X = x.detach().to(kFloat64).to_vector<double>();
      const std::vector<double> Wt = w.detach().to(kFloat64).to_vector<double>();
      const std::vector<double> R = r.to(kFloat64).to_vector<double>();
      std::vector<double> Y(static_cast<size_t>(n * g.o * oh * ow), 0.0), GX(X.size(), 0.0),
          GW(Wt.size(), 0.0), GB(static_cast<size_t>(g.o), 0.0);
      for (int64_t s = 0; s < n; ++s)
        for (int64_t o = 0; o < g.o; ++o)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              const int64_t yi = ((s * g.o + o) * oh + i) * ow + j;
              GB[o] += R[yi];
              for (int64_t c = 0; c < cg; ++c)
                for (int64_t ki = 0; ki < g.kh; ++ki)
                  for (int64_t kj = 0; kj < g.kw; ++kj) {
                    const int64_t hh = i * g.sh - g.ph + ki * g.dh,
                                  ww = j * g.sw - g.pw + kj * g.dw;
                    if (hh < 0 || hh >= g.h || ww < 0 || ww >= g.w) continue;
                    const int64_t xc = o / og * cg + c;
                    const int64_t xi = ((s * g.c + xc) * g.h + hh) * g.w + ww;
                    const int64_t wi = ((o * cg + c) * g.kh + ki) * g.kw + kj;
                    Y[yi] += Wt[wi] * X[xi];
                    GX[xi] += R[yi] * Wt[wi];
                    GW[wi] += R[yi] * X[xi];
                  }
            }
      if (with_bias) {
        const std::vector<double> B = b.detach().to(kFloat64).to_vector<double>();
        for (size_t k = 0; k < Y.size(); ++k) Y[k] += B[(k / static_cast<size_t>(oh * ow)) % g.o];
      }
      const auto expect_near = [&](const Tensor& got, const std::vector<double>& want,
                                   const char* what) {
        const std::vector<double> v = got.to(kFloat64).to_vector<double>();
        ASSERT_EQ(v.size(), want.size()) << what;
        for (size_t k = 0; k < v.size(); ++k) {
          ASSERT_NEAR(v[k], want[k], 1e-4 * (1 + std::abs(want[k])))
              << what << " at " << k << ", geometry " << (&g - geos) << ", bias " << with_bias;
        }
      };
      expect_near(y.detach(), Y, "output");
      expect_near(x.grad(), GX, "input gradient");
      expect_near(w.grad(), GW, "weight gradient");
      if (with_bias) expect_near(b.grad(), GB, "bias gradient");
    }
  }
}

// A tiny conv net on a fixed batch: the loss must fall under plain SGD steps.
TEST(NnConv, TinyConvNetTrains) {
  manual_seed(3);
  nn::Conv2d c1(nn::Conv2dOptions(1, 4, 3).padding(1));
  nn::Conv2d c2(nn::Conv2dOptions(4, 8, 3).padding(1));
  nn::MaxPool2d pool(nn::MaxPool2dOptions(2));
  nn::Linear fc(8 * 2 * 2, 3);
  TensorList params;
  for (const Tensor& p : c1->parameters()) params.push_back(p);
  for (const Tensor& p : c2->parameters()) params.push_back(p);
  for (const Tensor& p : fc->parameters()) params.push_back(p);
  const Tensor x = randn({8, 1, 8, 8});
  const Tensor target = randn({8, 3});
  auto loss_fn = [&] {
    Tensor h = pool(relu(c1(x)));
    h = pool(relu(c2(h)));
    Tensor out = fc(h.flatten(1));
    return ((out - target) * (out - target)).mean();
  };
  const double first = loss_fn().item<double>();
  double last = first;
  for (int step = 0; step < 30; ++step) {
    for (Tensor& p : params) p.mutable_grad() = Tensor();
    Tensor loss = loss_fn();
    loss.backward();
    NoGradGuard g;
    for (Tensor& p : params) {
      ASSERT_TRUE(p.grad().defined());
      p.sub_(p.grad() * 0.1);
    }
    last = loss.item<double>();
  }
  EXPECT_LT(last, 0.7 * first) << "first " << first << ", last " << last;
}
