// A few ops on a real GPU against the CPU: element-wise, reductions, softmax, matmul in fp32,
// fp16 and bf16 (the kernels are checked in full by the op harness on emulated devices; this is
// the same code compiled by nvcc and run on the hardware).
#include "cuda/cuda_test.h"

using namespace ember;
using ember::testing::CudaTest;
using ember::testing::max_diff;

TEST_F(CudaTest, ElementwiseMatchesTheCpu) {
  manual_seed(1);
  Tensor a = randn({513, 257}), b = randn({257});
  Tensor da = a.to(gpu()), db = b.to(gpu());
  EXPECT_LE(max_diff(da + db, a + b), 0.0);
  EXPECT_LE(max_diff(da * db, a * b), 0.0);
  EXPECT_LE(max_diff(da.t() * 2.0, a.t() * 2.0), 0.0);
  EXPECT_LE(max_diff(da.exp(), a.exp()), 1e-5 * a.exp().abs().max().item<double>());
  EXPECT_LE(max_diff(da.relu(), a.relu()), 0.0);
  EXPECT_LE(max_diff(da.to(kFloat16), a.to(kFloat16)), 0.0);
}

TEST_F(CudaTest, ReductionsAndSoftmaxMatchTheCpu) {
  manual_seed(2);
  Tensor a = randn({300, 1000});
  Tensor da = a.to(gpu());
  EXPECT_LE(max_diff(da.sum(), a.to(kFloat64).sum()), 1e-2);
  EXPECT_LE(max_diff(da.sum({1}), a.sum({1})), 1e-3);
  EXPECT_LE(max_diff(da.max(), a.max()), 0.0);
  EXPECT_LE(max_diff(da.softmax(-1), a.softmax(-1)), 1e-6);
}

TEST_F(CudaTest, MatmulMatchesTheCpu) {
  manual_seed(3);
  Tensor a = randn({257, 129}), b = randn({129, 65});
  Tensor ref = a.to(kFloat64).matmul(b.to(kFloat64));
  Tensor da = a.to(gpu()), db = b.to(gpu());
  EXPECT_LE(max_diff(da.matmul(db), ref), 1e-3);
  EXPECT_LE(max_diff(da.to(kFloat16).matmul(db.to(kFloat16)), ref), 0.15);
  EXPECT_LE(max_diff(da.to(kBFloat16).matmul(db.to(kBFloat16)), ref), 1.0);
}
