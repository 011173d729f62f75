// float32 products through oneDNN (backends::mkldnn) against a float64 reference and against
// OpenBLAS: every transpose layout, column-major and strided outputs, alpha/beta, products cut
// across threads, and the switch. The "no_onednn/" run (EMBER_ONEDNN_LIBRARY=none) checks that
// everything still works without the library.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/onednn.h"
#include "ember/backends.h"
#include "ember/ember.h"

using namespace ember;
namespace mkldnn = ember::backends::mkldnn;

namespace {

bool library_disabled() {
  const char* v = std::getenv("EMBER_ONEDNN_LIBRARY");
  return v != nullptr && std::string(v) == "none";
}

Tensor normal(const Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(static_cast<size_t>(shape.numel()));
  for (float& x : v) x = dist(rng);
  return tensor(v, shape);
}

std::vector<double> values(const Tensor& t) {
  return t.to(kFloat64).contiguous().to_vector<double>();
}

// alpha * a @ b + beta * c in float64, a (n, k), b (k, m), c (n, m).
std::vector<double> reference(const Tensor& a, const Tensor& b, const Tensor& c, double alpha,
                              double beta) {
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  std::vector<double> A = values(a), B = values(b), C = values(c);
  std::vector<double> out(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += A[i * k + p] * B[p * m + j];
      out[i * m + j] = alpha * s + beta * C[i * m + j];
    }
  return out;
}

void expect_close(const Tensor& got, const std::vector<double>& want, int64_t k,
                  const std::string& what) {
  std::vector<double> g = values(got);
  ASSERT_EQ(g.size(), want.size()) << what;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = 2e-6 * (std::abs(want[i]) + 4 * std::sqrt(static_cast<double>(k)));
    ASSERT_NEAR(g[i], want[i], tol) << what << ", element " << i;
  }
}

// An (r, c) operand, stored transposed when `trans` (so the product sees a transposed view).
Tensor operand(int64_t r, int64_t c, bool trans, uint32_t seed) {
  return trans ? normal({c, r}, seed).t() : normal({r, c}, seed);
}

// out = 0.5 * a @ b + 2 * out through the backend's gemm, out row-major, column-major or strided.
void check_gemm(int64_t n, int64_t m, int64_t k, const std::string& label) {
  for (int layout = 0; layout < 4; ++layout) {
    const bool ta = layout & 1, tb = layout & 2;
    Tensor a = operand(n, k, ta, 1), b = operand(k, m, tb, 2);
    for (int out_kind = 0; out_kind < 3; ++out_kind) {
      Tensor out = out_kind == 0   ? normal({n, m}, 3)
                   : out_kind == 1 ? normal({m, n}, 3).t()
                                   : normal({n, 2 * m}, 3).slice(1, 0, std::nullopt, 2);
      const std::vector<double> want = reference(a, b, out, 0.5, 2.0);
      cpu_backend().gemm(out.unsqueeze(0), a.unsqueeze(0), b.unsqueeze(0), 0.5, 2.0);
      expect_close(out, want, k,
                   label + " ta=" + std::to_string(ta) + " tb=" + std::to_string(tb) +
                       " out=" + std::to_string(out_kind));
    }
  }
}

}  // namespace

TEST(OneDnn, AvailabilityAndDescription) {
  const std::string d = mkldnn::describe();
  if (library_disabled()) {
    EXPECT_FALSE(mkldnn::is_available());
    EXPECT_NE(d.find("disabled by EMBER_ONEDNN_LIBRARY=none"), std::string::npos) << d;
    return;
  }
#ifdef EMBER_TEST_EXPECT_ONEDNN
  // The build found libdnnl, so the run-time loader must find it too: it is used, or refused
  // by name because of its sgemm's signal bug.
  EXPECT_TRUE(mkldnn::is_available() || d.find(" refused: ") != std::string::npos) << d;
#endif
  if (mkldnn::is_available()) {
    EXPECT_EQ(d.rfind("oneDNN ", 0), 0u) << d;
  }
  std::cout << "oneDNN: " << d << "\n";
}

TEST(OneDnn, VersionsWhoseSgemmCorruptsTheHeapOnASignalAreRefused) {
  using cpu::onednn_sgemm_corrupts_on_signal;
  EXPECT_TRUE(onednn_sgemm_corrupts_on_signal(1, 8, 0));
  EXPECT_TRUE(onednn_sgemm_corrupts_on_signal(2, 6, 3));  // Debian 12
  EXPECT_TRUE(onednn_sgemm_corrupts_on_signal(3, 10, 9));
  EXPECT_TRUE(onednn_sgemm_corrupts_on_signal(3, 11, 1));
  EXPECT_FALSE(onednn_sgemm_corrupts_on_signal(3, 11, 2));
  EXPECT_FALSE(onednn_sgemm_corrupts_on_signal(3, 12, 0));
  EXPECT_FALSE(onednn_sgemm_corrupts_on_signal(4, 0, 0));
  const std::string d = mkldnn::describe();
  if (mkldnn::is_available()) {
    // A loaded library is one of the fixed versions: "oneDNN X.Y.Z (path)".
    int major = 0, minor = 0, patch = 0;
    ASSERT_EQ(std::sscanf(d.c_str(), "oneDNN %d.%d.%d", &major, &minor, &patch), 3) << d;
    EXPECT_FALSE(onednn_sgemm_corrupts_on_signal(major, minor, patch)) << d;
  }
}

TEST(OneDnn, FlagsGuardRestoresTheSwitch) {
  const bool before = mkldnn::enabled();
  {
    mkldnn::FlagsGuard off(false);
    EXPECT_FALSE(mkldnn::enabled());
    {
      mkldnn::FlagsGuard on(true);
      EXPECT_TRUE(mkldnn::enabled());
    }
    EXPECT_FALSE(mkldnn::enabled());
  }
  EXPECT_EQ(mkldnn::enabled(), before);
}

TEST(OneDnn, EveryLayoutMatchesReferenceWithAndWithoutIt) {
  for (bool on : {true, false}) {
    mkldnn::FlagsGuard guard(on);
    const std::string label = on ? "oneDNN" : "OpenBLAS";
    check_gemm(37, 45, 50, label);   // every dimension large enough for oneDNN
    check_gemm(20, 24, 300, label);  // A B^T with a long k stays on OpenBLAS
    check_gemm(40, 30, 7, label);    // a tiny k stays on OpenBLAS
  }
}

TEST(OneDnn, ProductsCutAcrossThreadsMatchOneThread) {
  const int before = get_num_threads();
  // Rows cut (m >= n), columns cut (n > m), ragged blocks, transposed operands, beta = 1.
  struct Case {
    int64_t n, m, k;
    bool ta, tb;
  };
  for (const Case& c : {Case{250, 130, 160, false, false}, Case{70, 530, 150, true, false},
                        Case{200, 210, 120, false, true}, Case{90, 300, 200, true, true}}) {
    Tensor a = operand(c.n, c.k, c.ta, 4), b = operand(c.k, c.m, c.tb, 5);
    Tensor bias = normal({c.n, c.m}, 6);
    const std::vector<double> want = reference(a, b, bias, 1.0, 1.0);
    set_num_threads(1);
    Tensor one = addmm(bias, a, b);
    set_num_threads(std::max(2, before));
    Tensor many = addmm(bias, a, b);
    set_num_threads(before);
    const std::string what = std::to_string(c.n) + "x" + std::to_string(c.m) + "x" +
                             std::to_string(c.k) + " ta=" + std::to_string(c.ta) +
                             " tb=" + std::to_string(c.tb);
    expect_close(one, want, c.k, what + " (1 thread)");
    expect_close(many, want, c.k, what + " (2 threads)");
  }
}

TEST(OneDnn, BatchesAndHalfPrecisionGoThroughTheSameCall) {
  // Many mid-sized matrices run one per thread; bfloat16 computes through float32 blocks.
  Tensor a = normal({12, 24, 40}, 7), b = normal({12, 40, 32}, 8);
  Tensor c = bmm(a, b);
  for (int64_t z = 0; z < 12; ++z) {
    Tensor az = a.select(0, z), bz = b.select(0, z);
    expect_close(c.select(0, z), reference(az, bz, zeros({24, 32}), 1.0, 0.0), 40, "bmm");
  }
  Tensor h = mm(a.select(0, 0).to(kBFloat16), b.select(0, 0).to(kBFloat16)).to(kFloat32);
  Tensor f =
      mm(a.select(0, 0).to(kBFloat16).to(kFloat32), b.select(0, 0).to(kBFloat16).to(kFloat32));
  EXPECT_TRUE(allclose(h, f, 1e-2, 1e-2));
}
