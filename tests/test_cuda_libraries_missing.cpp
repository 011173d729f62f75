// Every optional CUDA library made unfindable before the first query: versions are 0, paths
// empty, the reasons name the override, and NVML health is unavailable, without exceptions.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ember/ember.h"

using namespace ember;

namespace {
// Before main: the libraries are opened once per process, at the first query.
const bool kDisabled = [] {
  setenv("EMBER_CUBLASLT_LIBRARY", "none", 1);
  setenv("EMBER_CUDNN_LIBRARY", "/nonexistent/libcudnn.so.9", 1);
  setenv("EMBER_NCCL_LIBRARY", "none", 1);
  setenv("EMBER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  return true;
}();
}  // namespace

TEST(MissingLibraries, VersionsAreZeroWithReasons) {
  ASSERT_TRUE(kDisabled);
  EXPECT_EQ(cuda::cublas_version(), 0);
  EXPECT_EQ(cuda::cudnn_version(), 0);
  EXPECT_EQ(cuda::nccl_version(), 0);
  EXPECT_EQ(cuda::library_path("cudnn"), "");
  EXPECT_NE(cuda::library_error("cublas").find("EMBER_CUBLASLT_LIBRARY=none"), std::string::npos);
  EXPECT_NE(cuda::library_error("cudnn").find("/nonexistent/libcudnn.so.9"), std::string::npos)
      << cuda::library_error("cudnn");
}

TEST(MissingLibraries, NvmlHealthIsUnavailableNotAnError) {
  for (int device : {0, 3}) {
    cuda::DeviceHealth h;
    ASSERT_NO_THROW(h = cuda::device_health(device));
    EXPECT_FALSE(h.available);
    EXPECT_NE(h.error.find("NVML"), std::string::npos) << h.error;
    EXPECT_NE(h.error.find("/nonexistent/libnvidia-ml.so.1"), std::string::npos) << h.error;
    EXPECT_EQ(h.utilization_gpu, -1);
    EXPECT_EQ(h.memory_total, 0u);
    EXPECT_TRUE(h.processes.empty());
  }
  EXPECT_EQ(cuda::nvml_device_count(), 0);
  EXPECT_EQ(cuda::driver_release(), "");
}
