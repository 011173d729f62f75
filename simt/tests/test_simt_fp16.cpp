// fp16 and bf16 kernels under every thread order, against float/double references computed on
// the host with the headers' own conversions.
#include <cmath>

#include "test_util.h"

namespace {

class Half : public OrderTest {};

std::vector<__half> to_half(const std::vector<float>& v) {
  std::vector<__half> out;
  for (float x : v) out.push_back(__float2half_rn(x));
  return out;
}

TEST_P(Half, FmaRoundsOnce) {
  const int n = 500;
  const auto xf = ramp(n, 8.0f, -4.0f), yf = ramp(n, 3.0f, 0.5f);
  const __half a = __float2half_rn(1.3f);
  const auto x = to_half(xf), y = to_half(yf);
  DeviceBuffer<__half> dx(x), dy(y);
  launch_haxpy(a, dx.get(), dy.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dy.download();
  for (int i = 0; i < n; ++i) {
    // a*x is exact in double, so fma in double then one rounding is the correctly rounded result.
    const double exact =
        std::fma(static_cast<double>(__half2float(a)), __half2float(x[i]), __half2float(y[i]));
    ASSERT_EQ(__half_as_ushort(out[i]), __half_as_ushort(__double2half(exact))) << i;
  }
}

TEST_P(Half, PairedAdd) {
  const int n = 300;
  std::vector<__half2> a(n), b(n);
  for (int i = 0; i < n; ++i) {
    a[i] = __floats2half2_rn(0.1f * i, -0.3f * i);
    b[i] = __floats2half2_rn(1.5f, 0.25f * i);
  }
  DeviceBuffer<__half2> da(a), db(b), dc(n);
  launch_hadd2(da.get(), db.get(), dc.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto c = dc.download();
  for (int i = 0; i < n; ++i) {
    const float2 fa = __half22float2(a[i]), fb = __half22float2(b[i]), fc = __half22float2(c[i]);
    ASSERT_EQ(fc.x, __half2float(__float2half_rn(fa.x + fb.x))) << i;
    ASSERT_EQ(fc.y, __half2float(__float2half_rn(fa.y + fb.y))) << i;
  }
}

TEST_P(Half, Bf16Math) {
  const int n = 200;
  const auto xf = ramp(n, 4.0f, -2.0f);
  std::vector<__nv_bfloat16> x;
  for (float v : xf) x.push_back(__float2bfloat16_rn(v));
  DeviceBuffer<__nv_bfloat16> dx(x), dy(n);
  launch_bf16_math(dx.get(), dy.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto y = dy.download();
  for (int i = 0; i < n; ++i) {
    const double v = __bfloat162float(x[i]);
    const double ref = std::exp(v) * std::sqrt(std::abs(v)) + 1.0 / std::sqrt(1.0 + v * v);
    // Three roundings to 8 significant bits on the way.
    ASSERT_NEAR(__bfloat162float(y[i]), ref, 0.03 * std::abs(ref) + 1e-3) << i << " x=" << v;
  }
}

TEST_P(Half, WarpSumWithHalfShuffles) {
  const int n = 1000;
  const auto xf = ramp(n, 0.5f);
  const auto x = to_half(xf);
  DeviceBuffer<__half> dx(x);
  DeviceBuffer<float> out(std::vector<float>{0.0f});
  launch_half_warp_sum(dx.get(), out.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  double ref = 0;
  for (const __half& h : x) ref += __half2float(h);
  EXPECT_NEAR(out.download()[0], ref, 0.01 * ref);
}

TEST_P(Half, AtomicAddOnHalfAndBf16) {
  const int threads = 1024;
  DeviceBuffer<__half> h(std::vector<__half>{__float2half_rn(0.0f)});
  DeviceBuffer<__nv_bfloat16> b(std::vector<__nv_bfloat16>{__float2bfloat16_rn(0.0f)});
  // Equal steps give the same rounded sequence in any order: integers stay exact in fp16 up to
  // 2048, while bf16's 8 significant bits make the sum stall at 32 (32 + 1/8 rounds to 32).
  launch_half_atomics(h.get(), b.get(), __float2half_rn(1.0f), __float2bfloat16_rn(0.125f), threads,
                      nullptr);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(__half2float(h.download()[0]), 1024.0f);
  float expected = 0.0f;
  for (int t = 0; t < threads; ++t)
    expected = __bfloat162float(__float2bfloat16_rn(expected + 0.125f));
  EXPECT_EQ(expected, 32.0f);
  EXPECT_EQ(__bfloat162float(b.download()[0]), expected);
}

TEST_P(Half, RoundingConversions) {
  const std::vector<float> xf = {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f, 3.75f, -3.25f, 65504.0f};
  const auto x = to_half(xf);
  const int n = static_cast<int>(x.size());
  DeviceBuffer<__half> dx(x), fma(n);
  DeviceBuffer<int> rn(n), rd(n), ru(n);
  launch_half_convert(dx.get(), rn.get(), rd.get(), ru.get(), fma.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto vrn = rn.download(), vrd = rd.download(), vru = ru.download();
  const auto vfma = fma.download();
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(vrn[i], static_cast<int>(std::nearbyint(xf[i]))) << xf[i];  // ties to even
    EXPECT_EQ(vrd[i], static_cast<int>(std::floor(xf[i]))) << xf[i];
    EXPECT_EQ(vru[i], static_cast<int>(std::ceil(xf[i]))) << xf[i];
    const double exact = std::fma(static_cast<double>(xf[i]), xf[i], xf[i]);
    EXPECT_EQ(__half_as_ushort(vfma[i]), __half_as_ushort(__double2half(exact))) << xf[i];
  }
  EXPECT_TRUE(__hisinf(vfma[n - 1]));  // 65504^2 overflows fp16
}

INSTANTIATE_ORDERS(Half);

}  // namespace
