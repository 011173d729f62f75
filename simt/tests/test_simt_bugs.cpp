// Deliberately wrong kernels (buggy.cu), each proven caught: a wrong result under some thread
// order, a launch failure whose report names the source lines, or the matching cudaError_t.
#include <cmath>
#include <fstream>
#include <regex>

#include "test_util.h"

namespace {

// The text of line `n` of a test source file, to check that reports name the right lines.
std::string source_line(const std::string& file, int n) {
  std::ifstream in(std::string(SIMT_TEST_DIR) + "/" + file);
  std::string line;
  for (int i = 1; i <= n && std::getline(in, line); ++i) {
  }
  return line;
}

std::vector<int> lines_named(const std::string& message, const std::string& file) {
  std::vector<int> lines;
  const std::regex re(file + ":([0-9]+)");
  for (auto it = std::sregex_iterator(message.begin(), message.end(), re);
       it != std::sregex_iterator(); ++it) {
    lines.push_back(std::stoi((*it)[1]));
  }
  return lines;
}

// A kernel fault is sticky, as on a GPU: the device must be reset before the next test.
class Bugs : public ::testing::Test {
 protected:
  void TearDown() override {
    cudaDeviceReset();
    simt::set_order(simt::Order::kForward);
  }

  // Runs a faulting launch and returns the emulator's report.
  template <typename F>
  std::string expect_launch_failure(F launch) {
    launch();
    EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);  // sticky
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, 16), cudaErrorLaunchFailure);
    return simt::last_error_message();
  }
};

TEST_F(Bugs, MissingSyncthreadsGivesWrongResultsUnderForwardAndRandomOrder) {
  const int n = 1024;
  const auto in = ramp(n, 1.0f, 1.0f);  // never zero, so a stale tile entry shows
  std::vector<float> expected(n);
  for (int i = 0; i < n; ++i) expected[i] = in[i / 256 * 256 + (i % 256 + 1) % 256];
  for (simt::Order order : {simt::Order::kForward, simt::Order::kRandom}) {
    simt::set_order(order);
    DeviceBuffer<float> din(in), dout(n);
    launch_missing_sync(din.get(), dout.get(), n, nullptr);
    ASSERT_CUDA(cudaGetLastError());
    EXPECT_NE(dout.download(), expected) << "order " << static_cast<int>(order);
  }
}

TEST_F(Bugs, DivergentBarrierIsReportedWithBothLines) {
  DeviceBuffer<float> data(256);
  const std::string report =
      expect_launch_failure([&] { launch_divergent_barrier(data.get(), 256, nullptr); });
  EXPECT_NE(report.find("divergent barrier"), std::string::npos) << report;
  const auto lines = lines_named(report, "buggy.cu");
  ASSERT_EQ(lines.size(), 2u) << report;
  EXPECT_NE(lines[0], lines[1]);
  for (int line : lines) {
    EXPECT_NE(source_line("buggy.cu", line).find("__syncthreads"), std::string::npos) << line;
  }
  EXPECT_NE(report.find("128 thread(s) wait"), std::string::npos) << report;
}

TEST_F(Bugs, ReturnBeforeBarrierIsADeadlock) {
  for (simt::Order order : {simt::Order::kForward, simt::Order::kReverse, simt::Order::kRandom}) {
    simt::set_order(order);
    DeviceBuffer<float> data(256);
    const std::string report =
        expect_launch_failure([&] { launch_return_before_barrier(data.get(), nullptr); });
    EXPECT_NE(report.find("deadlock"), std::string::npos) << report;
    EXPECT_NE(report.find("56 thread(s) exited"), std::string::npos) << report;
    EXPECT_NE(report.find("200 wait at __syncthreads (buggy.cu:"), std::string::npos) << report;
    const auto lines = lines_named(report, "buggy.cu");
    ASSERT_EQ(lines.size(), 1u) << report;
    EXPECT_NE(source_line("buggy.cu", lines[0]).find("__syncthreads"), std::string::npos);
    cudaDeviceReset();
  }
}

TEST_F(Bugs, ShuffleSourceLaneOutsideMask) {
  DeviceBuffer<int> data(32);
  const std::string report =
      expect_launch_failure([&] { launch_shuffle_outside_mask(data.get(), nullptr); });
  EXPECT_NE(report.find("reads lane 16, which is not in the mask 0x0000ffff"), std::string::npos)
      << report;
  EXPECT_NE(report.find("__shfl_sync at buggy.cu:"), std::string::npos) << report;
}

TEST_F(Bugs, FullMaskShuffleRunByHalfAWarp) {
  for (simt::Order order : {simt::Order::kForward, simt::Order::kReverse, simt::Order::kRandom}) {
    simt::set_order(order);
    DeviceBuffer<int> data(32);
    const std::string report =
        expect_launch_failure([&] { launch_half_warp_full_mask(data.get(), nullptr); });
    EXPECT_NE(report.find("__shfl_down_sync"), std::string::npos) << report;
    EXPECT_NE(report.find("exited"), std::string::npos) << report;
    cudaDeviceReset();
  }
}

TEST_F(Bugs, MismatchedMasks) {
  DeviceBuffer<int> data(32);
  const std::string report =
      expect_launch_failure([&] { launch_mismatched_masks(data.get(), nullptr); });
  EXPECT_NE(report.find("does not match lane"), std::string::npos) << report;
}

TEST_F(Bugs, CallerOutsideItsMask) {
  DeviceBuffer<int> data(32);
  const std::string report =
      expect_launch_failure([&] { launch_caller_outside_mask(data.get(), nullptr); });
  EXPECT_NE(report.find("is not in its own mask 0x00000001"), std::string::npos) << report;
}

TEST_F(Bugs, MaskNamingLanesThatDoNotExist) {
  DeviceBuffer<int> data(16);
  const std::string report =
      expect_launch_failure([&] { launch_mask_beyond_block(data.get(), nullptr); });
  EXPECT_NE(report.find("names lanes 0xffff0000 that do not exist (the warp has 16 lanes)"),
            std::string::npos)
      << report;
}

TEST_F(Bugs, UninitialisedDynamicSharedMemoryReadsNaN) {
  const int n = 64;
  DeviceBuffer<float> out(n);
  launch_uninitialised_shared(out.get(), n, nullptr);
  ASSERT_CUDA(cudaGetLastError());
  for (float v : out.download()) EXPECT_TRUE(std::isnan(v));
}

TEST_F(Bugs, TrapFailsTheLaunch) {
  std::vector<int> v(32, 1);
  v[5] = -1;
  DeviceBuffer<int> data(v);
  const std::string report = expect_launch_failure([&] { launch_trap(data.get(), nullptr); });
  EXPECT_NE(report.find("__trap()"), std::string::npos) << report;
}

TEST_F(Bugs, BlockOf2048ThreadsIsAnInvalidConfiguration) {
  DeviceBuffer<float> data(2048);
  launch_huge_block(data.get(), nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky
  EXPECT_NE(simt::last_error_message().find("2048 threads"), std::string::npos);
}

TEST_F(Bugs, DynamicSharedAbove48KiBNeedsOptIn) {
  const int n = 16384;  // 64 KiB
  DeviceBuffer<float> in(n), out(n);
  ASSERT_CUDA(allow_reverse_shared(48 * 1024));  // the default limit
  launch_reverse(in.get(), out.get(), n, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_NE(simt::last_error_message().find("cudaFuncAttributeMaxDynamicSharedMemorySize"),
            std::string::npos);
  EXPECT_EQ(allow_reverse_shared(228 * 1024), cudaErrorInvalidValue);  // beyond the device
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST_F(Bugs, CopyPastTheEndOfAnAllocation) {
  DeviceBuffer<float> buffer(100);
  std::vector<float> host(101, 1.0f);
  EXPECT_EQ(cudaMemcpy(buffer.get(), host.data(), 101 * sizeof(float), cudaMemcpyHostToDevice),
            cudaErrorInvalidValue);
  EXPECT_NE(simt::last_error_message().find("passes the end of its 400-byte allocation"),
            std::string::npos)
      << simt::last_error_message();
  EXPECT_EQ(cudaMemcpy(host.data(), buffer.get() + 1, 100 * sizeof(float), cudaMemcpyDeviceToHost),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

TEST(BugsDeathTest, FiberStackOverflowIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        float* out = nullptr;
        cudaMalloc(reinterpret_cast<void**>(&out), sizeof(float));
        launch_stack_overflow(out, nullptr);
      },
      "overflowed its fiber stack|stack-overflow");
}

}  // namespace
