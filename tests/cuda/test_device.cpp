// The device API on a real GPU: properties, selection, guards, synchronisation, versions.
#include "cuda/cuda_test.h"

using namespace ember;
using ember::testing::CudaTest;

TEST_F(CudaTest, PropertiesDescribeARealGpu) {
  ASSERT_GE(cuda::device_count(), 1);
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceProperties p = cuda::get_device_properties(i);
    EXPECT_FALSE(p.name.empty());
    EXPECT_EQ(cuda::get_device_name(i), p.name);
    EXPECT_GE(p.major, 7) << p.name;
    EXPECT_GT(p.total_memory, size_t{1} << 30);
    EXPECT_GT(p.multi_processor_count, 0);
    EXPECT_GT(p.l2_cache_size, 0u);
  }
  EXPECT_THROW(cuda::get_device_properties(cuda::device_count()), Error);
}

TEST_F(CudaTest, RuntimeAndDriverVersions) {
  EXPECT_GE(cuda::runtime_version(), 11000);
  // The driver must be at least as new as the runtime's major version to have found a device.
  EXPECT_GE(cuda::driver_version() / 1000, cuda::runtime_version() / 1000);
  EXPECT_NE(std::string(cuda_archs()), "");
}

TEST_F(CudaTest, GuardSelectsAndRestoresTheDevice) {
  const int before = cuda::current_device();
  const int other = cuda::device_count() - 1;
  {
    cuda::DeviceGuard guard(other);
    EXPECT_EQ(cuda::current_device(), other);
    EXPECT_EQ(guard.original_device(), before);
    Tensor t = ones({4}, TensorOptions().device(Device(kCUDA, other)));
    EXPECT_EQ(t.device().index(), other);
  }
  EXPECT_EQ(cuda::current_device(), before);
  EXPECT_NO_THROW(cuda::synchronize());
  EXPECT_NO_THROW(cuda::synchronize(other));
}

TEST_F(CudaTest, HealthThroughNvmlWhenTheDriverHasIt) {
  const cuda::DeviceHealth h = cuda::device_health(0);
  if (!h.available) GTEST_SKIP() << "NVML: " << h.error;
  EXPECT_GT(h.memory_total, 0u);
  EXPECT_LE(h.memory_used, h.memory_total);
  EXPECT_GE(h.utilization_gpu, 0);
  EXPECT_FALSE(cuda::driver_release().empty());
  EXPECT_GE(cuda::nvml_device_count(), cuda::device_count());
}
