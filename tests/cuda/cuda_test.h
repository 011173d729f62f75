// Shared by the tests that need a real GPU (label cuda): a fixture that skips, saying why, where
// this build or this machine has no CUDA device, and a max-difference helper.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "ember/ember.h"

namespace ember::testing {

inline std::string why_no_gpu() {
  const std::string info = build_info();
  if (info.find("cuda=off") != std::string::npos)
    return "this ember was built without CUDA (-DEMBER_CUDA=ON builds the CUDA backend)";
  if (cuda::driver_version() == 0) return "no NVIDIA driver on this machine";
  return "the driver found no CUDA device";
}

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda::is_available()) GTEST_SKIP() << "needs a GPU: " << why_no_gpu();
  }
  static Device gpu(int i = 0) { return Device(kCUDA, i); }
};

// Largest |a - b| after bringing both to the CPU in float64.
inline double max_diff(const Tensor& a, const Tensor& b) {
  return (a.cpu().to(kFloat64) - b.cpu().to(kFloat64)).abs().max().item<double>();
}

}  // namespace ember::testing
