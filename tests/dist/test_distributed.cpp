// The Gloo process groups: bad input in this process, and every collective, the mismatch check and
// the fault reports with 2 and 4 worker processes on loopback. Every wait is bounded.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "ember/ember.h"

namespace dist = ember::distributed;
using namespace std::chrono_literals;

namespace {

int free_port() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

struct RankResult {
  int status = -1;  // waitpid status
  std::string output;
  bool exited() const { return WIFEXITED(status); }
  int code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
  int signal() const { return WIFSIGNALED(status) ? WTERMSIG(status) : 0; }
};

// Starts n dist_worker processes with torchrun's environment and waits at most limit for them;
// whatever still runs then (a stopped rank) is killed, and timed_out says whether that happened
// to a rank that was not stopped on purpose.
std::vector<RankResult> run_ranks(int n, const std::string& scenario,
                                  std::map<std::string, std::string> extra = {},
                                  std::chrono::seconds limit = 20s, bool* timed_out = nullptr) {
  int port = free_port();
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int r = 0; r < n; ++r) {
    std::string log = ::testing::TempDir() + "dist_" + scenario + "_" + std::to_string(getpid()) +
                      "_" + std::to_string(r) + ".log";
    logs.push_back(log);
    std::map<std::string, std::string> env = {
        {"MASTER_ADDR", "127.0.0.1"},      {"MASTER_PORT", std::to_string(port)},
        {"RANK", std::to_string(r)},       {"WORLD_SIZE", std::to_string(n)},
        {"LOCAL_RANK", std::to_string(r)}, {"LOCAL_WORLD_SIZE", std::to_string(n)},
        {"OMP_NUM_THREADS", "1"}};
    for (auto& [k, v] : extra) env[k] = v;
    pid_t pid = fork();
    if (pid == 0) {
      for (auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
      FILE* f = std::fopen(log.c_str(), "w");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
      execl(EMBER_DIST_WORKER, EMBER_DIST_WORKER, scenario.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pids.push_back(pid);
  }
  std::vector<RankResult> results(static_cast<size_t>(n));
  std::vector<bool> done(static_cast<size_t>(n), false);
  auto deadline = std::chrono::steady_clock::now() + limit;
  int left = n, stopped = 0;
  std::vector<bool> was_stopped(static_cast<size_t>(n), false);
  while (left > stopped && std::chrono::steady_clock::now() < deadline) {
    for (int r = 0; r < n; ++r) {
      if (done[static_cast<size_t>(r)]) continue;
      int st = 0;
      if (waitpid(pids[static_cast<size_t>(r)], &st, WNOHANG | WUNTRACED) !=
          pids[static_cast<size_t>(r)])
        continue;
      if (WIFSTOPPED(st)) {
        if (!was_stopped[static_cast<size_t>(r)]) ++stopped;
        was_stopped[static_cast<size_t>(r)] = true;
      } else {
        results[static_cast<size_t>(r)].status = st;
        done[static_cast<size_t>(r)] = true;
        --left;
      }
    }
    std::this_thread::sleep_for(10ms);
  }
  if (timed_out) *timed_out = false;
  for (int r = 0; r < n; ++r) {
    if (done[static_cast<size_t>(r)]) continue;
    if (timed_out && !was_stopped[static_cast<size_t>(r)]) *timed_out = true;
    kill(pids[static_cast<size_t>(r)], SIGKILL);
    waitpid(pids[static_cast<size_t>(r)], &results[static_cast<size_t>(r)].status, 0);
  }
  for (int r = 0; r < n; ++r) {
    std::ifstream in(logs[static_cast<size_t>(r)]);
    std::stringstream ss;
    ss << in.rdbuf();
    results[static_cast<size_t>(r)].output = ss.str();
    std::remove(logs[static_cast<size_t>(r)].c_str());
  }
  return results;
}

std::string all_output(const std::vector<RankResult>& rs) {
  std::string s;
  for (size_t r = 0; r < rs.size(); ++r) s += "--- rank " + std::to_string(r) + "\n" + rs[r].output;
  return s;
}

// Runs fn with the environment variables set (or unset when the value is empty), then restores.
template <class F>
void with_env(std::map<std::string, std::string> vars, F fn) {
  std::map<std::string, std::optional<std::string>> saved;
  for (auto& [k, v] : vars) {
    const char* old = std::getenv(k.c_str());
    saved[k] = old ? std::optional<std::string>(old) : std::nullopt;
    if (v.empty())
      unsetenv(k.c_str());
    else
      setenv(k.c_str(), v.c_str(), 1);
  }
  fn();
  for (auto& [k, v] : saved) {
    if (v)
      setenv(k.c_str(), v->c_str(), 1);
    else
      unsetenv(k.c_str());
  }
}

std::string init_error(const std::string& backend, dist::InitOptions o = {}) {
  try {
    dist::init_process_group(backend, o);
  } catch (const ember::Error& e) {
    return e.what();
  }
  dist::destroy_process_group();
  return "";
}

}  // namespace

// ---- bad input in this process ----------------------------------------------------------------

TEST(Distributed, MissingEnvironmentIsNamed) {
  with_env({{"MASTER_ADDR", ""}, {"MASTER_PORT", "29999"}, {"RANK", "1"}, {"WORLD_SIZE", "2"}}, [] {
    std::string e = init_error("gloo");
    EXPECT_NE(e.find("[init_process_group] rank 1: MASTER_ADDR is not set"), std::string::npos)
        << e;
  });
  with_env({{"RANK", ""}, {"WORLD_SIZE", ""}}, [] {
    std::string e = init_error("gloo");
    EXPECT_NE(e.find("RANK is not set"), std::string::npos) << e;
  });
}

TEST(Distributed, RankOutOfRangeAndBadBackendAreNamed) {
  dist::InitOptions o;
  o.rank = 2;
  o.world_size = 2;
  o.master_addr = "127.0.0.1";
  o.master_port = 0;
  std::string e = init_error("gloo", o);
  EXPECT_NE(e.find("rank 2: RANK 2 is not below WORLD_SIZE 2"), std::string::npos) << e;
  o.rank = 0;
  e = init_error("mpi", o);
  EXPECT_NE(e.find("unknown backend 'mpi'"), std::string::npos) << e;
  e = init_error("nccl", o);
  EXPECT_NE(e.find("'nccl' is not available"), std::string::npos) << e;
  EXPECT_FALSE(dist::is_initialized());
}

TEST(Distributed, WorldOfOneAndCollectivesAfterDestroy) {
  ember::Tensor t = ember::ones({3});
  try {
    dist::all_reduce(t);
    FAIL() << "all_reduce before init succeeded";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not initialized"), std::string::npos) << e.what();
  }
  dist::InitOptions o;
  o.rank = 0;
  o.world_size = 1;
  o.master_addr = "127.0.0.1";
  o.master_port = 0;  // any free port: nobody else connects
  o.timeout = 5s;
  dist::init_process_group("gloo", o);
  EXPECT_EQ(dist::get_rank(), 0);
  EXPECT_EQ(dist::get_world_size(), 1);
  EXPECT_EQ(dist::get_backend(), "gloo");
  dist::all_reduce(t, dist::ReduceOp::AVG);
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>({1, 1, 1}));
  ember::Tensor strided = ember::ones({4, 4}).t().slice(0, 0, 2);
  try {
    dist::all_reduce(strided);
    FAIL() << "a non-contiguous tensor was accepted";
  } catch (const ember::ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[all_reduce] rank 0"), std::string::npos) << e.what();
  }
  ember::Tensor ints = ember::ones({2}, ember::TensorOptions().dtype(ember::kInt64));
  EXPECT_THROW(dist::all_reduce(ints, dist::ReduceOp::AVG), ember::TypeError);
  ember::Tensor wrong = ember::zeros({5});
  EXPECT_THROW(dist::all_gather_into_tensor(wrong, t), ember::ValueError);
  dist::destroy_process_group();
  try {
    dist::all_reduce(t);
    FAIL() << "all_reduce after destroy succeeded";
  } catch (const ember::Error& e) {
    EXPECT_NE(std::string(e.what()).find("[all_reduce] rank 0: the default process group was "
                                         "destroyed"),
              std::string::npos)
        << e.what();
  }
}

// ---- several processes ------------------------------------------------------------------------

class DistributedRanks : public ::testing::TestWithParam<int> {};

TEST_P(DistributedRanks, EveryCollectiveAndDtype) {
  bool timed_out = false;
  auto rs = run_ranks(GetParam(), "collectives", {}, 25s, &timed_out);
  EXPECT_FALSE(timed_out) << all_output(rs);
  for (auto& r : rs) EXPECT_EQ(r.code(), 0) << all_output(rs);
}

TEST_P(DistributedRanks, DetailModeNamesMismatchedShapes) {
  auto rs = run_ranks(GetParam(), "mismatch", {{"EMBER_DISTRIBUTED_DEBUG", "DETAIL"}});
  for (auto& r : rs) EXPECT_EQ(r.code(), 3) << all_output(rs);
}

TEST_P(DistributedRanks, KilledRankIsNamedBySurvivors) {
  bool timed_out = false;
  auto rs = run_ranks(GetParam(), "kill", {}, 20s, &timed_out);
  EXPECT_FALSE(timed_out) << all_output(rs);
  EXPECT_EQ(rs[1].signal(), SIGKILL);
  for (size_t r = 0; r < rs.size(); ++r)
    if (r != 1) EXPECT_EQ(rs[r].code(), 3) << all_output(rs);
}

INSTANTIATE_TEST_SUITE_P(World, DistributedRanks, ::testing::Values(2, 4),
                         [](const auto& info) { return "ranks" + std::to_string(info.param); });

TEST(Distributed, StoppedRankTimesOutNamingWhoDidNotArrive) {
  bool timed_out = false;
  auto rs = run_ranks(3, "stop", {}, 20s, &timed_out);
  // Rank 1 stays stopped until the harness kills it; the others end on their own.
  EXPECT_EQ(rs[1].signal(), SIGKILL);
  EXPECT_EQ(rs[0].code(), 3) << all_output(rs);
  EXPECT_EQ(rs[2].code(), 3) << all_output(rs);
}
