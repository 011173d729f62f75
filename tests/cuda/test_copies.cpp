// Copies between the host and a real GPU: contiguous, strided, broadcast, dtype conversion, and
// device to device, bit-exact against the CPU.
#include "cuda/cuda_test.h"

using namespace ember;
using ember::testing::CudaTest;
using ember::testing::max_diff;

TEST_F(CudaTest, HostToDeviceToHostIsExact) {
  manual_seed(7);
  for (DType dt : {kFloat32, kFloat64, kFloat16, kBFloat16, kInt64, kInt32, kUInt8, kBool}) {
    Tensor h = (randn({257, 33}) * 50).to(dt);
    Tensor d = h.to(gpu());
    EXPECT_TRUE(d.is_cuda());
    EXPECT_EQ(max_diff(d, h), 0.0) << dtype_name(dt);
  }
}

TEST_F(CudaTest, StridedAndBroadcastCopies) {
  manual_seed(8);
  Tensor h = randn({64, 48});
  Tensor d = h.to(gpu());
  EXPECT_EQ(max_diff(d.t().contiguous(), h.t()), 0.0);
  EXPECT_EQ(max_diff(d.narrow(1, 5, 20), h.narrow(1, 5, 20)), 0.0);
  Tensor dst = empty({64, 48}, TensorOptions(kFloat32).device(gpu()));
  dst.copy_(h.narrow(0, 0, 1));  // broadcast a row over every row
  EXPECT_EQ(max_diff(dst, h.narrow(0, 0, 1).expand({64, 48})), 0.0);
  Tensor t = empty({48, 64}, TensorOptions(kFloat32).device(gpu()));
  t.copy_(d.t());  // device to device, strided source
  EXPECT_EQ(max_diff(t, h.t()), 0.0);
}

TEST_F(CudaTest, DtypeConversionMatchesTheCpu) {
  manual_seed(9);
  Tensor h = randn({1000}) * 100;
  Tensor d = h.to(gpu());
  for (DType dt : {kFloat16, kBFloat16, kInt32, kFloat64}) {
    EXPECT_EQ(max_diff(d.to(dt), h.to(dt)), 0.0) << dtype_name(dt);
  }
}

TEST_F(CudaTest, CopiesBetweenTwoDevices) {
  if (cuda::device_count() < 2) GTEST_SKIP() << "needs two GPUs, found " << cuda::device_count();
  Tensor h = arange(4096, TensorOptions(kFloat32));
  Tensor a = h.to(gpu(0));
  Tensor b = a.to(gpu(1));
  EXPECT_EQ(b.device().index(), 1);
  EXPECT_EQ(max_diff(b, h), 0.0);
}
