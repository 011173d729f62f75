// ember linked as a CPU program: with or without CUDA compiled in, a machine without a GPU
// reports no devices and a cuda tensor raises a [cuda] error instead of aborting.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {

void expect_cuda_error(const std::function<void()>& fn) {
  try {
    fn();
    FAIL() << "expected an ember::Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("[cuda] ", 0), 0u) << e.what();
  }
}

}  // namespace

TEST(CudaUnavailable, NoDevices) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  EXPECT_FALSE(cuda::is_available());
  EXPECT_EQ(cuda::device_count(), 0);
  EXPECT_EQ(cuda::current_device(), 0);
  EXPECT_GE(cuda::runtime_version(), 0);
  EXPECT_EQ(cuda::driver_version() >= 0, true);
}

TEST(CudaUnavailable, CudaTensorsRaise) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  expect_cuda_error([] { zeros({2, 3}, TensorOptions().device(Device("cuda:0"))); });
  expect_cuda_error([] { ones({2}).cuda(); });
  expect_cuda_error([] { ones({2}).to(Device("cuda")); });
  expect_cuda_error([] { cuda::get_device_properties(0); });
  expect_cuda_error([] { cuda::set_device(0); });
  expect_cuda_error([] { cuda::DeviceGuard g(1); });
  // The CPU keeps working afterwards.
  EXPECT_EQ(ones({3}).sum().item<float>(), 3.0f);
}

TEST(CudaUnavailable, BuildInfoNamesCuda) {
  std::string info = build_info();
  EXPECT_NE(info.find("cuda="), std::string::npos) << info;
}

TEST(CudaUnavailable, StreamsEventsAndPinnedMemory) {
  if (cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  auto expect_device_error = [](const std::function<void()>& fn) {
    try {
      fn();
      ADD_FAILURE() << "expected an ember::Error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("device"), std::string::npos) << e.what();
    }
  };
  expect_device_error([] { cuda::current_stream(); });
  expect_device_error([] { cuda::default_stream(); });
  expect_device_error([] { cuda::get_stream_from_pool(0, true); });
  cuda::Event event(true);  // an event needs a device only when recorded
  EXPECT_TRUE(event.query());
  EXPECT_FALSE(event.is_created());
  expect_device_error([&] { event.record(); });

  Tensor h = ones({4});
  EXPECT_FALSE(h.is_pinned());
  const std::string none = "[pin_memory] Cannot access accelerator device when none is available.";
  try {
    h.pin_memory();
    ADD_FAILURE() << "pin_memory without a device";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), none);
  }
  EXPECT_THROW(empty({2}, TensorOptions().pinned_memory(true)), Error);
  EXPECT_EQ(h.to(Device(kCPU), true).sum().item<float>(), 4.0f);  // non_blocking on the host
}

// The cuDNN switches exist in every build; without a GPU cuDNN is never available.
TEST(CudnnSwitches, DefaultsGuardAndAvailability) {
  if (!cuda::is_available()) EXPECT_FALSE(backends::cudnn::is_available());
  const bool enabled = backends::cudnn::enabled();
  EXPECT_FALSE(backends::cudnn::benchmark());
  EXPECT_FALSE(backends::cudnn::deterministic());
  {
    backends::cudnn::FlagsGuard guard(!enabled, true, true);
    EXPECT_EQ(backends::cudnn::enabled(), !enabled);
    EXPECT_TRUE(backends::cudnn::benchmark());
    EXPECT_TRUE(backends::cudnn::deterministic());
  }
  EXPECT_EQ(backends::cudnn::enabled(), enabled);
  EXPECT_FALSE(backends::cudnn::benchmark());
  EXPECT_FALSE(backends::cudnn::deterministic());
}
