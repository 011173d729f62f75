// EMBER_CUDA_ALLOC_CONF is read once, at the first CUDA allocation: a bad setting makes every
// CUDA allocation raise an error naming it, while the CPU keeps working.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ember/ember.h"

using namespace ember;

namespace {
const bool kEnvSet = [] {
  return setenv("EMBER_CUDA_ALLOC_CONF", "max_split_size_mb:512,garbage_collection_threshold:1.5",
                1) == 0;
}();
}  // namespace

TEST(CudaAllocConf, BadSettingIsReportedOnEveryCudaAllocation) {
  ASSERT_TRUE(kEnvSet);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      zeros({4}, TensorOptions().device(Device("cuda:0")));
      ADD_FAILURE() << "a CUDA allocation succeeded with a bad EMBER_CUDA_ALLOC_CONF";
    } catch (const ValueError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("[EMBER_CUDA_ALLOC_CONF] garbage_collection_threshold", 0), 0u) << msg;
      EXPECT_NE(msg.find("'1.5'"), std::string::npos) << msg;
    }
  }
  EXPECT_EQ(ones({3}).sum().item<float>(), 3.0f);
}
