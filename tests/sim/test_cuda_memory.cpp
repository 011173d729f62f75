// CUDA memory through the caching allocator on emulated devices: statistics, reuse, empty_cache,
// memory_summary, and the out-of-memory recipe (catch, free, halve the batch, go on).
#include <gtest/gtest.h>

#include <cstdlib>

#include "ember/ember.h"

using namespace ember;

namespace {
// 256 MiB per emulated device, set before the runtime first starts.
const bool kEnvSet = [] { return setenv("EMBER_SIM_MEMORY", "268435456", 1) == 0; }();
const TensorOptions kCuda = TensorOptions().device(Device("cuda:0"));
}  // namespace

TEST(CudaMemory, StatisticsFollowTensors) {
  ASSERT_TRUE(kEnvSet);
  cuda::empty_cache();
  cuda::reset_peak_memory_stats();
  const size_t base = cuda::memory_allocated();
  {
    Tensor a = empty({1000}, kCuda);  // 4000 bytes -> one 4096-byte block of a 2 MiB segment
    EXPECT_EQ(cuda::memory_allocated() - base, 4096u);
    EXPECT_GE(cuda::memory_reserved(), cuda::memory_allocated());
    Tensor b = empty({3 << 20}, kCuda);  // 12 MiB: large pool
    EXPECT_EQ(cuda::memory_allocated() - base, 4096u + (12u << 20));
  }
  EXPECT_EQ(cuda::memory_allocated(), base);
  EXPECT_EQ(cuda::max_memory_allocated() - base, 4096u + (12u << 20));
  EXPECT_GT(cuda::memory_reserved(), 0u);  // freed blocks stay cached
  auto stats = cuda::memory_stats();
  EXPECT_EQ(stats.at("allocation.all.current"), 0);
  EXPECT_GE(stats.at("allocation.all.allocated"), 2);
  cuda::empty_cache();
  EXPECT_EQ(cuda::memory_reserved(), 0u);
  cuda::reset_peak_memory_stats();
  EXPECT_EQ(cuda::max_memory_allocated(), cuda::memory_allocated());
}

TEST(CudaMemory, FreedBlocksAreReused) {
  void* first;
  {
    Tensor a = zeros({1 << 20}, kCuda);
    first = a.data_ptr();
  }
  Tensor b = ones({1 << 20}, kCuda);
  EXPECT_EQ(b.data_ptr(), first);
  EXPECT_EQ(b.cpu().sum().item<float>(), float(1 << 20));
}

TEST(CudaMemory, SummaryHasPyTorchLayout) {
  Tensor keep = empty({1 << 18}, kCuda);
  std::string s = cuda::memory_summary();
  EXPECT_NE(s.find("ember CUDA memory summary, device ID 0"), std::string::npos) << s;
  EXPECT_NE(s.find("Allocated memory"), std::string::npos);
  EXPECT_NE(s.find("GPU reserved memory"), std::string::npos);
  // Every line is 75 columns between its two frame bars.
  size_t start = 0, lines = 0;
  for (size_t end; (end = s.find('\n', start)) != std::string::npos; start = end + 1, ++lines) {
    EXPECT_EQ(end - start, 77u) << s.substr(start, end - start);
  }
  EXPECT_GT(lines, 20u);
}

TEST(CudaMemory, OutOfMemoryIsCatchableAndTheProgramGoesOn) {
  cuda::empty_cache();
  // The recipe users follow: try a batch, and on OOM free what is held, halve it and retry.
  int64_t batch = int64_t(1) << 27;  // 512 MiB of float32: more than the 256 MiB device
  bool caught = false;
  Tensor x;
  while (!x.defined()) {
    try {
      x = ones({batch}, kCuda);
    } catch (const OutOfMemoryError& e) {
      caught = true;
      std::string msg = e.what();
      EXPECT_NE(msg.find("CUDA out of memory. Tried to allocate"), std::string::npos) << msg;
      EXPECT_NE(msg.find("EMBER_CUDA_ALLOC_CONF"), std::string::npos) << msg;
      cuda::empty_cache();
      batch /= 2;
    }
  }
  EXPECT_TRUE(caught);
  EXPECT_LE(batch, int64_t(1) << 26);
  EXPECT_EQ(x.narrow(0, batch - 1, 1).cpu().item<float>(), 1.0f);
  EXPECT_GE(cuda::memory_stats().at("num_ooms"), 1);
  x = Tensor();
  cuda::empty_cache();
}

TEST(CudaMemory, MemoryFractionCapsTheAllocator) {
  cuda::empty_cache();
  cuda::set_per_process_memory_fraction(0.25);               // 64 MiB of 256 MiB
  EXPECT_THROW(empty({25 << 20}, kCuda), OutOfMemoryError);  // 100 MiB
  Tensor ok = empty({10 << 20}, kCuda);                      // 40 MiB
  EXPECT_EQ(ok.numel(), 10 << 20);
  cuda::set_per_process_memory_fraction(1.0);
  EXPECT_THROW(cuda::set_per_process_memory_fraction(0.0), ValueError);
}
