// The fused cross-entropy kernels on the emulated CUDA device against the CPU backend: every row
// mapping (lane groups, a full warp, a block per row), 16-bit inputs with float accumulation,
// gradients, and targets out of range reported after the kernel.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "ember/ember.h"
#include "test_util.h"

using namespace ember;
using namespace ember_test;
namespace F = ember::nn::functional;

namespace {

const Device kDev(kCUDA, 0);

struct Shape2 {
  int64_t rows, classes;
};

TEST(CudaLoss, MatchesCpuForEveryRowMapping) {
  manual_seed(0);
  for (Shape2 s : {Shape2{37, 5}, Shape2{11, 33}, Shape2{3, 2000}}) {
    for (DType dt : {kFloat32, kFloat16, kBFloat16, kFloat64}) {
      SCOPED_TRACE(std::to_string(s.rows) + "x" + std::to_string(s.classes) + " " +
                   std::string(dtype_name(dt)));
      Tensor x = (randn({s.rows, s.classes}) * 3).to(dt);
      Tensor t = randint(0, s.classes, {s.rows});
      t.narrow(0, 0, 1).fill_(-100);
      Tensor w = rand({s.classes}).to(dt) + 0.5;
      auto o = F::CrossEntropyFuncOptions().weight(w).label_smoothing(0.1);
      // The CPU reference computes in float32 from the same (rounded) values.
      Tensor xc = x.to(kFloat32).clone().requires_grad_(true);
      Tensor want = F::cross_entropy(xc, t, F::CrossEntropyFuncOptions(o).weight(w.to(kFloat32)));
      want.backward();
      Tensor xd = x.to(kDev).requires_grad_(true);
      Tensor got =
          F::cross_entropy(xd, t.to(kDev), F::CrossEntropyFuncOptions(o).weight(w.to(kDev)));
      EXPECT_EQ(got.dtype(), dt);
      got.backward();
      const double tol = dt == kFloat32 || dt == kFloat64 ? 1e-5 : 2e-2;
      expect_close(got, want, tol);
      expect_close(xd.grad(), xc.grad(), dt == kFloat32 || dt == kFloat64 ? 1e-6 : 1e-2);

      Tensor none = F::nll_loss(x.to(kDev), t.to(kDev), F::NLLLossFuncOptions().reduction("none"));
      expect_close(none, F::nll_loss(x.to(kFloat32), t, F::NLLLossFuncOptions().reduction("none")),
                   tol);
    }
  }
}

TEST(CudaLoss, TargetOutOfRangeIsReportedAfterTheKernel) {
  Tensor x = randn({4, 3}, TensorOptions().device(kDev));
  Tensor bad = tensor({int64_t(0), int64_t(7), int64_t(1), int64_t(2)}).to(kDev);
  try {
    F::cross_entropy(x, bad);
    ADD_FAILURE() << "no error";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "[cross_entropy] Target 7 is out of bounds.");
  }
  Tensor neg = tensor({int64_t(0), int64_t(-3), int64_t(1), int64_t(2)}).to(kDev);
  try {
    F::nll_loss(x, neg);
    ADD_FAILURE() << "no error";
  } catch (const IndexError& e) {
    EXPECT_EQ(std::string(e.what()), "[nll_loss] Target -3 is out of bounds.");
  }
  // The device is still usable afterwards.
  Tensor ok = tensor({int64_t(0), int64_t(1), int64_t(1), int64_t(2)}).to(kDev);
  EXPECT_TRUE(std::isfinite(F::cross_entropy(x, ok).item<float>()));
}

}  // namespace
