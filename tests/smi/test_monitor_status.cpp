// The monitor status file that `ember train` publishes for `ember smi`, on an emulated device:
// written at once, follows the caching allocator, replaced atomically, removed at the end, and
// files of dead processes are not read back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ember/ember.h"
#include "monitor_status.h"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::cli::monitor;

namespace {

class MonitorStatus : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ember-monitor-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    setenv("EMBER_RUNTIME_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("EMBER_RUNTIME_DIR");
    fs::remove_all(dir_);
  }
  const Status* mine(const std::vector<Status>& all) {
    for (const Status& s : all)
      if (s.pid == static_cast<unsigned>(getpid())) return &s;
    return nullptr;
  }
  fs::path dir_;
};

TEST_F(MonitorStatus, PublishesTheAllocatorAndRemovesTheFile) {
  std::string path;
  {
    Publisher pub("test", 0, 0.02);
    path = pub.path();
    ASSERT_EQ(path, (dir_ / (std::to_string(getpid()) + ".status")).string());
    ASSERT_TRUE(fs::exists(path)) << "written when constructed";
    const Status* before = mine(read_live());
    ASSERT_NE(before, nullptr);
    EXPECT_EQ(before->command, "test");
    EXPECT_EQ(before->device, 0);
    EXPECT_EQ(before->uuid, cuda::device_uuid(0));
    const size_t allocated_before = before->allocated;

    Tensor t = zeros({1 << 18}, TensorOptions(kFloat32).device(Device(kCUDA, 0)));  // 1 MiB
    bool seen = false;
    for (int i = 0; i < 200 && !seen; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      const Status* s = mine(read_live());
      seen = s != nullptr && s->allocated >= allocated_before + (size_t{1} << 20) &&
             s->reserved >= s->allocated && s->reserved == cuda::memory_reserved(0);
    }
    EXPECT_TRUE(seen) << "the file follows the caching allocator";
    EXPECT_EQ((fs::status(dir_).permissions() & fs::perms::all), fs::perms::owner_all);
  }
  EXPECT_FALSE(fs::exists(path)) << "removed when the publisher ends";
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST_F(MonitorStatus, FilesOfDeadOrReusedPidsAreStale) {
  fs::create_directories(dir_);
  Status s;
  s.pid = static_cast<unsigned>(getpid());
  s.start_time = process_start_time(s.pid);
  s.uuid = "GPU-x";
  s.allocated = 5;
  s.reserved = 7;
  std::ofstream(dir_ / "live.status") << format_status(s);
  Status reused = s;
  reused.start_time = s.start_time + 1;  // the pid now belongs to a later process
  std::ofstream(dir_ / "reused.status") << format_status(reused);
  Status dead = s;
  dead.pid = 0x7ffffff0;  // above pid_max
  std::ofstream(dir_ / "dead.status") << format_status(dead);
  std::ofstream(dir_ / "garbage.status") << "not a status\n";
  const std::vector<Status> live = read_live();
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].allocated, 5u);
  EXPECT_EQ(live[0].reserved, 7u);
}

TEST(MonitorStatusFormat, RoundTrips) {
  Status s;
  s.pid = 42;
  s.start_time = 99;
  s.command = "train";
  s.device = 1;
  s.uuid = "GPU-01000000-0000-0000-0000-000000000000";
  s.allocated = 1;
  s.reserved = 2;
  s.peak_allocated = 3;
  s.peak_reserved = 4;
  s.updated = 1.5;
  Status back;
  ASSERT_TRUE(parse_status(format_status(s), back));
  EXPECT_EQ(format_status(back), format_status(s));
  EXPECT_FALSE(parse_status("pid=1\n", back));
}

}  // namespace
