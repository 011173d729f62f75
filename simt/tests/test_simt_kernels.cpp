// Correct kernels under every thread order, checked against CPU references: element-wise,
// reductions, ballots, shared-memory tiles, dynamic shared memory, warp collectives, atomics.
#include <cmath>
#include <numeric>

#include "test_util.h"

namespace {

class Kernels : public OrderTest {};

// The emulated device math is not the host's libm (simt/device_math.h): within CUDA's error bounds
// but different in the last bit for many inputs, the same on every run; and a * b + c is fused, as
// nvcc fuses it, unless written with the _rn intrinsics.
TEST_P(Kernels, DeviceMathIsNotTheHostLibm) {
  const int n = 2000;
  std::vector<double> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.001 + 7.3 * i / n;
    y[i] = 1.0 / 3.0 + i * 1e-3;
  }
  DeviceBuffer<double> dx(x), dy(y), out(4 * n), rounded(n);
  launch_device_math(dx.get(), dy.get(), out.get(), rounded.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto r = out.download();
  const auto r2 = rounded.download();
  auto ulps = [](double got, long double exact) {
    const double e = static_cast<double>(exact);
    return static_cast<double>(fabsl(got - exact) /
                               (std::nextafter(std::fabs(e), INFINITY) - std::fabs(e)));
  };
  int log_differs = 0, sin_differs = 0, expf_differs = 0, fused = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_LT(ulps(r[4 * i], logl(x[i])), 1.0) << x[i];
    ASSERT_LT(ulps(r[4 * i + 1], sinl(x[i])), 2.0) << x[i];
    const float ef = std::exp(static_cast<float>(x[i]));
    ASSERT_LE(std::fabs(static_cast<float>(r[4 * i + 2]) - ef), std::nextafter(ef, INFINITY) - ef)
        << x[i];
    log_differs += r[4 * i] != std::log(x[i]);
    sin_differs += r[4 * i + 1] != std::sin(x[i]);
    expf_differs += static_cast<float>(r[4 * i + 2]) != ef;
    fused += r[4 * i + 3] == std::fma(x[i], y[i], 1.0) && r[4 * i + 3] != x[i] * y[i] + 1.0;
    volatile double p = x[i] * y[i];  // one rounding for the product, one for the sum
    ASSERT_EQ(r2[i], p + 1.0) << i;
  }
  EXPECT_GT(log_differs, n / 4);
  EXPECT_GT(sin_differs, n / 4);
  EXPECT_GT(expf_differs, n / 4);
#if defined(__FMA__) || defined(SIMT_TEST_EXPECT_FMA)
  EXPECT_GT(fused, n / 20);  // where the two roundings and the one differ
#endif
  // Deterministic: a second run gives the same bits.
  launch_device_math(dx.get(), dy.get(), out.get(), rounded.get(), n, nullptr);
  EXPECT_EQ(out.download(), r);
}

TEST_P(Kernels, GridStrideAdd) {
  const int n = 10000;
  const auto a = ramp(n), b = ramp(n, 3.0f, -1.0f);
  DeviceBuffer<float> da(a), db(b), dc(n);
  launch_add(da.get(), db.get(), dc.get(), n, 7, 128, nullptr);  // fewer threads than elements
  ASSERT_CUDA(cudaGetLastError());
  const auto c = dc.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(c[i], a[i] + b[i]) << i;
}

TEST_P(Kernels, BlockReduction) {
  const int n = 50000;
  const auto x = ramp(n, 2.0f, -0.5f);
  DeviceBuffer<float> dx(x), out(std::vector<float>{0.0f});
  launch_block_sum(dx.get(), out.get(), n, 9, 256, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const double expected = std::accumulate(x.begin(), x.end(), 0.0);
  EXPECT_NEAR(out.download()[0], expected, 1e-3 * std::abs(expected) + 1e-2);
}

TEST_P(Kernels, BallotCount) {
  const int n = 1000;  // not a multiple of the block: the tail lanes vote false
  auto x = ramp(n, 2.0f, -1.0f);
  DeviceBuffer<float> dx(x);
  DeviceBuffer<unsigned> count(std::vector<unsigned>{0});
  launch_count_positive(dx.get(), count.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  unsigned expected = 0;
  for (float v : x) expected += v > 0.0f;
  EXPECT_EQ(count.download()[0], expected);
}

TEST_P(Kernels, TiledTranspose) {
  const int rows = 70, cols = 45;  // partial tiles on both edges
  const auto in = ramp(rows * cols);
  DeviceBuffer<float> din(in), dout(rows * cols);
  launch_transpose(din.get(), dout.get(), rows, cols, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dout.download();
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) ASSERT_EQ(out[c * rows + r], in[r * cols + c]) << r << "," << c;
  }
}

void check_matmul(int m, int n, int k, int tile) {
  const auto a = ramp(m * k, 1.0f, -0.5f), b = ramp(k * n, 2.0f, -1.0f);
  DeviceBuffer<float> da(a), db(b), dc(m * n);
  launch_matmul(da.get(), db.get(), dc.get(), m, n, k, tile, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto c = dc.download();
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int p = 0; p < k; ++p) ref += static_cast<double>(a[i * k + p]) * b[p * n + j];
      ASSERT_NEAR(c[i * n + j], ref, 1e-4 * k) << i << "," << j << " tile " << tile;
    }
  }
}

TEST_P(Kernels, TiledMatmulDynamicShared) {
  check_matmul(37, 29, 41, 16);
  check_matmul(33, 40, 70, 32);
}

TEST_P(Kernels, DynamicSharedAboveDefaultAfterOptIn) {
  const int n = 16384;  // 64 KiB of floats
  const auto in = ramp(n);
  DeviceBuffer<float> din(in), dout(n);
  ASSERT_CUDA(allow_reverse_shared(n * sizeof(float)));
  launch_reverse(din.get(), dout.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dout.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], in[n - 1 - i]) << i;
}

TEST_P(Kernels, Atomics) {
  const int threads = 1000;
  AtomicResults init{};
  init.min_i = 1 << 30;
  init.and_u = 0xffffffffu;
  init.min_ll = 1LL << 40;
  DeviceBuffer<AtomicResults> d(std::vector<AtomicResults>{init});
  launch_atomics(d.get(), threads, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const AtomicResults r = d.download()[0];
  unsigned xor_all = 0;
  for (int t = 0; t < threads; ++t) xor_all ^= static_cast<unsigned>(t);
  EXPECT_EQ(r.add_i, threads);
  EXPECT_EQ(r.sub_i, -2 * threads);
  EXPECT_EQ(r.max_i, threads - 1);
  EXPECT_EQ(r.min_i, -(threads - 1));
  EXPECT_EQ(r.exch_i, 7);
  EXPECT_EQ(r.cas_i, 3 * threads);
  EXPECT_EQ(r.add_u, 2u * threads);
  EXPECT_EQ(r.and_u, 0u);
  EXPECT_EQ(r.or_u, 0xffffffffu);
  EXPECT_EQ(r.xor_u, xor_all);
  EXPECT_EQ(r.inc_u, static_cast<unsigned>(threads % 10));  // wraps after 9
  // atomicDec from 0 wraps to 9, then counts down: 0 -> 9 -> 8 ... -> 0 -> 9 ...
  EXPECT_EQ(r.dec_u, static_cast<unsigned>((10 - threads % 10) % 10));
  EXPECT_EQ(r.add_ull, 1ULL * threads * (threads - 1) / 2);
  EXPECT_EQ(r.max_ull, static_cast<unsigned long long>(threads - 1) << 33);
  EXPECT_EQ(r.min_ll, -3LL * (threads - 1));
  EXPECT_EQ(r.add_f, 0.5f * threads);
  EXPECT_EQ(r.add_d, 0.25 * threads);
}

TEST_P(Kernels, ByValueParametersArePerThread) {
  const int n = 200;
  DeviceBuffer<int> out(n);
  launch_bump_param(out.get(), 1000, n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto v = out.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(v[i], 1000 + i);
}

TEST_P(Kernels, WarpCollectives) {
  const int threads = 80;  // two full warps and a partial one of 16 lanes
  std::vector<int> in(threads);
  for (int t = 0; t < threads; ++t) in[t] = (t * 37) % 23;
  DeviceBuffer<int> din(in);
  DeviceBuffer<unsigned> dout(threads * 10);
  launch_warp_ops(din.get(), dout.get(), threads, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dout.download();
  for (int t = 0; t < threads; ++t) {
    const int warp = t / 32, lane = t % 32, base = warp * 32;
    const int lanes = std::min(32, threads - base);
    const unsigned full = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1;
    auto value = [&](int l) { return static_cast<unsigned>(in[base + l]); };
    const unsigned* o = &out[t * 10];
    SCOPED_TRACE("thread " + std::to_string(t));
    EXPECT_EQ(o[0], value(3));
    EXPECT_EQ(o[1], lane % 16 >= 2 ? value(lane - 2) : value(lane));
    EXPECT_EQ(o[2], lane % 8 + 5 < 8 ? value(lane + 5) : value(lane));
    EXPECT_EQ(o[3], value(lane ^ 6));
    unsigned ballot = 0, match = 0, sum = 0;
    for (int l = 0; l < lanes; ++l) {
      ballot |= (value(l) % 3 == 0) << l;
      match |= (value(l) % 4 == value(lane) % 4) << l;
      sum += value(l);
    }
    EXPECT_EQ(o[4], ballot);
    EXPECT_EQ(o[5], 0u);
    EXPECT_EQ(o[6], 1u);
    EXPECT_EQ(o[7], match);
    EXPECT_EQ(o[8], sum);
    EXPECT_EQ(o[9], full);
  }
}

TEST_P(Kernels, DisjointMasksMeetSeparately) {
  std::vector<int> in(64);
  std::iota(in.begin(), in.end(), 100);
  DeviceBuffer<int> din(in), dout(64);
  launch_split_warp(din.get(), dout.get(), nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dout.download();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out[t], in[t / 16 * 16]) << t;
}

TEST_P(Kernels, BarrierReductions) {
  const int threads = 96;
  std::vector<int> in(threads);
  for (int t = 0; t < threads; ++t) in[t] = t % 5 == 0 ? 1 : 0;
  DeviceBuffer<int> din(in), dout(3);
  launch_barrier_reductions(din.get(), dout.get(), threads, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(dout.download(), (std::vector<int>{20, 0, 1}));
  std::fill(in.begin(), in.end(), 1);
  din.upload(in);
  launch_barrier_reductions(din.get(), dout.get(), threads, nullptr);
  EXPECT_EQ(dout.download(), (std::vector<int>{threads, 1, 1}));
}

TEST_P(Kernels, ConstantMemory) {
  std::vector<float> table(16);
  for (int i = 0; i < 16; ++i) table[i] = static_cast<float>(i) - 4.0f;
  ASSERT_CUDA(set_scale_table(table.data()));
  const int n = 300;
  const auto x = ramp(n);
  DeviceBuffer<float> dx(x), dout(n);
  launch_scale_by_table(dx.get(), dout.get(), n, nullptr);
  const auto out = dout.download();
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], table[i % 16] * x[i]);
}

TEST_P(Kernels, BuiltinIndicesIn3D) {
  const dim3 grid(3, 2, 2), block(4, 3, 2);
  const int total = 3 * 2 * 2 * 4 * 3 * 2;
  DeviceBuffer<unsigned> dout(total * 6);
  launch_indices(dout.get(), grid, block, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  const auto out = dout.download();
  int k = 0;
  for (unsigned bz = 0; bz < 2; ++bz)
    for (unsigned by = 0; by < 2; ++by)
      for (unsigned bx = 0; bx < 3; ++bx)
        for (unsigned tz = 0; tz < 2; ++tz)
          for (unsigned ty = 0; ty < 3; ++ty)
            for (unsigned tx = 0; tx < 4; ++tx, ++k) {
              const unsigned* o = &out[k * 6];
              ASSERT_EQ((std::vector<unsigned>(o, o + 6)),
                        (std::vector<unsigned>{tx, ty, tz, bx, by, bz + 100 * (2 + 10 * 2)}));
            }
}

TEST_P(Kernels, SpinWaitWithNanosleepLetsOthersRun) {
  DeviceBuffer<int> out(1);
  launch_spin_flag(out.get(), 64, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  EXPECT_EQ(out.download()[0], 42);
}

INSTANTIATE_ORDERS(Kernels);

TEST(Workers, OneAndManyWorkersAgree) {
  const int saved = simt::workers();
  const int n = 20000;
  const auto x = ramp(n, 1.0f, -0.25f);
  DeviceBuffer<float> dx(x), out(1);
  std::vector<float> results;
  for (int workers : {1, 2, 4}) {
    simt::set_workers(workers);
    out.upload({0.0f});
    launch_block_sum(dx.get(), out.get(), n, 16, 128, nullptr);
    ASSERT_CUDA(cudaGetLastError());
    results.push_back(out.download()[0]);
  }
  simt::set_workers(saved);
  const double expected = std::accumulate(x.begin(), x.end(), 0.0);
  for (float r : results) EXPECT_NEAR(r, expected, 1e-3 * std::abs(expected) + 1e-2);
}

}  // namespace
