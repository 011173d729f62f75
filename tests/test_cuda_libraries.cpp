// CUDA library versions and NVML, found at run time: consistent answers whether or not the
// libraries are installed, and a missing or wrong file is reported, never a crash.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "dynload/dynlib.h"
#include "ember/ember.h"

using namespace ember;

TEST(CudaLibraries, VersionAndPathAgree) {
  for (const char* name : {"cublas", "cudnn", "nccl"}) {
    const int v = std::string(name) == "cublas"  ? cuda::cublas_version()
                  : std::string(name) == "cudnn" ? cuda::cudnn_version()
                                                 : cuda::nccl_version();
    EXPECT_GE(v, 0) << name;
    const std::string path = cuda::library_path(name);
    const std::string why = cuda::library_error(name);
    if (v > 0) {
      EXPECT_NE(path.find("lib"), std::string::npos) << name << ": " << path;
      EXPECT_TRUE(why.empty()) << why;
      EXPECT_FALSE(cuda::format_library_version(name, v).empty());
    } else {
      EXPECT_TRUE(path.empty()) << name;
      EXPECT_FALSE(why.empty()) << name;
    }
  }
  // Asked twice, the same answer (loaded once).
  EXPECT_EQ(cuda::cudnn_version(), cuda::cudnn_version());
}

TEST(CudaLibraries, UnknownLibraryNameIsAnError) {
  try {
    cuda::library_path("cufft");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[cuda] unknown library 'cufft'"), std::string::npos);
  }
}

TEST(DynamicLibrary, MissingFileGivesTheLoadersReason) {
  auto lib = dynload::open_library(nullptr, {"libember-no-such-library.so.1"});
  EXPECT_FALSE(lib);
  EXPECT_NE(lib.error.find("libember-no-such-library.so.1"), std::string::npos) << lib.error;
  EXPECT_EQ(dynload::find_symbol(lib, "anything"), nullptr);
}

TEST(DynamicLibrary, OverrideVariableWins) {
  setenv("EMBER_TEST_LIBRARY", "libm.so.6", 1);
  auto lib = dynload::open_library("EMBER_TEST_LIBRARY", {"libember-no-such-library.so.1"});
  ASSERT_TRUE(lib) << lib.error;
  EXPECT_NE(lib.path.find("libm.so.6"), std::string::npos) << lib.path;
  EXPECT_NE(dynload::find_symbol(lib, "cos"), nullptr);
  // A library without NVML's symbols loads but offers none of them.
  EXPECT_EQ(dynload::find_symbol(lib, "nvmlInit_v2"), nullptr);
  setenv("EMBER_TEST_LIBRARY", "none", 1);
  lib = dynload::open_library("EMBER_TEST_LIBRARY", {"libm.so.6"});
  EXPECT_FALSE(lib);
  EXPECT_NE(lib.error.find("EMBER_TEST_LIBRARY=none"), std::string::npos);
  unsetenv("EMBER_TEST_LIBRARY");
}

TEST(DeviceHealth, NegativeOrdinalIsAnError) { EXPECT_THROW(cuda::device_health(-1), Error); }

// Without NVML (no driver, as on machines without a GPU) health is unavailable with the reason.
TEST(DeviceHealth, AvailableOnlyWithNvml) {
  const cuda::DeviceHealth h = cuda::device_health(0);
  if (cuda::nvml_device_count() == 0) {
    EXPECT_FALSE(h.available);
    EXPECT_FALSE(h.error.empty());
    EXPECT_TRUE(cuda::driver_release().empty());
  } else if (h.available) {
    EXPECT_GT(h.memory_total, 0u);
    EXPECT_LE(h.memory_used, h.memory_total);
    EXPECT_FALSE(cuda::driver_release().empty());
  }
}

// pip wheels put cuDNN under <site-packages>/nvidia/cudnn/lib (and PyTorch under torch/lib): the
// loader searches those of $VIRTUAL_ENV among others.
TEST(CudaLibraries, SearchesPythonWheelDirectories) {
  const std::string root = ::testing::TempDir() + "ember_wheels";
  const std::string lib = root + "/lib/python3.11/site-packages/nvidia/cudnn/lib";
  ASSERT_EQ(
      std::system(
          ("mkdir -p '" + lib + "' '" + root + "/lib/python3.11/site-packages/torch/lib'").c_str()),
      0);
  const char* old = std::getenv("VIRTUAL_ENV");
  const std::string saved = old != nullptr ? old : "";
  setenv("VIRTUAL_ENV", root.c_str(), 1);
  const std::vector<std::string> dirs = dynload::python_library_dirs("cudnn");
  if (old != nullptr) {
    setenv("VIRTUAL_ENV", saved.c_str(), 1);
  } else {
    unsetenv("VIRTUAL_ENV");
  }
  ASSERT_GE(dirs.size(), 2u);
  EXPECT_EQ(dirs[0], lib);
  EXPECT_EQ(dirs[1], root + "/lib/python3.11/site-packages/torch/lib");
}
