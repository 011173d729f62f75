// The profiler on the emulated CUDA device: ops on cuda:0 are recorded with their shapes, and
// their device allocations land in the CUDA memory columns of the op that made them.
#include <gtest/gtest.h>

#include "ember/ember.h"
#include "ember/profiler.h"

namespace ember {
namespace {

TEST(ProfilerSim, CudaOpsAndTheirMemory) {
  Tensor a = ones({16, 16}, TensorOptions(Device(kCUDA, 0)));
  Tensor b = ones({16, 16}, TensorOptions(Device(kCUDA, 0)));
  profiler::profile prof(
      {.activities = {profiler::ProfilerActivity::CPU, profiler::ProfilerActivity::CUDA},
       .record_shapes = true,
       .profile_memory = true});
  prof.start();
  Tensor c = mm(a, b);
  prof.stop();
  const profiler::FunctionEventAvg* row = nullptr;
  auto k = prof.key_averages();
  for (const auto& r : k.rows) {
    if (r.key == "mm") row = &r;
  }
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->count, 1);
  EXPECT_EQ(row->self_cuda_memory_usage, 16 * 16 * 4);
  EXPECT_EQ(row->self_cpu_memory_usage, 0);
  EXPECT_EQ(prof.events()[0].input_shapes[0], (std::vector<int64_t>{16, 16}));
}

}  // namespace
}  // namespace ember
