// The caching allocator on a real GPU: statistics follow tensors, cached blocks are reused,
// empty_cache returns them, and an impossible request raises OutOfMemoryError and the program
// goes on.
#include "cuda/cuda_test.h"

using namespace ember;
using ember::testing::CudaTest;

TEST_F(CudaTest, StatisticsFollowTensors) {
  cuda::empty_cache();
  const size_t base = cuda::memory_allocated(0);
  {
    Tensor t = empty({int64_t{1} << 20}, TensorOptions(kFloat32).device(gpu()));  // 4 MiB
    EXPECT_GE(cuda::memory_allocated(0), base + (size_t{4} << 20));
    EXPECT_GE(cuda::memory_reserved(0), cuda::memory_allocated(0));
    EXPECT_GE(cuda::max_memory_allocated(0), cuda::memory_allocated(0));
  }
  EXPECT_EQ(cuda::memory_allocated(0), base);
  const size_t reserved = cuda::memory_reserved(0);
  EXPECT_GE(reserved, size_t{4} << 20);  // the block stays cached
  {
    Tensor again = empty({int64_t{1} << 20}, TensorOptions(kFloat32).device(gpu()));
    EXPECT_EQ(cuda::memory_reserved(0), reserved);  // reused, not a new cudaMalloc
  }
  cuda::empty_cache();
  EXPECT_LT(cuda::memory_reserved(0), reserved);
  auto stats = cuda::memory_stats(0);
  EXPECT_GT(stats.at("allocation.all.allocated"), 0);
  EXPECT_NE(cuda::memory_summary(0).find("Allocated memory"), std::string::npos);
}

TEST_F(CudaTest, OutOfMemoryIsCatchable) {
  const size_t total = cuda::get_device_properties(0).total_memory;
  const int64_t too_many = static_cast<int64_t>(total / 4 * 2);  // 2x the device in float32
  try {
    Tensor t = empty({too_many}, TensorOptions(kFloat32).device(gpu()));
    FAIL() << "allocating twice the device's memory succeeded";
  } catch (const OutOfMemoryError& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA out of memory"), std::string::npos) << e.what();
  }
  EXPECT_GE(cuda::memory_stats(0).at("num_ooms"), 1);
  Tensor small = ones({1024}, TensorOptions(kFloat32).device(gpu()));  // and the program goes on
  EXPECT_EQ(small.cpu().sum().item<float>(), 1024.0f);
}
