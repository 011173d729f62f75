// Process groups: rendezvous (torchrun's environment or explicit options), one worker thread per
// group that runs its collectives in order, sequence numbers, and the errors that name ranks.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "distributed/comm.h"
#include "ember/ops.h"

namespace ember::distributed {

// ---- Work -------------------------------------------------------------------------------------

struct Work::State {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  void finish(std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    error = e;
    done = true;
    cv.notify_all();
  }
};

Work::Work() : state_(std::make_shared<State>()) { state_->done = true; }
Work::Work(std::shared_ptr<State> state) : state_(std::move(state)) {}
bool Work::wait() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->done; });
  if (state_->error) std::rethrow_exception(state_->error);
  return true;
}
bool Work::is_completed() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done;
}
bool Work::is_success() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->done && !state_->error;
}

// ---- the process-wide state -------------------------------------------------------------------

namespace {

struct Global {
  std::mutex mu;
  Group world;
  std::vector<std::weak_ptr<ProcessGroup>> groups;
  std::shared_ptr<TCPStore> store;
  std::string backend;
  std::string hostname;
  std::chrono::milliseconds timeout{0};
  int rank = -1;
  int world_size = -1;
  int next_group_id = 1;
  bool detail = false;
  bool destroyed = false;
};
Global& global() {
  static Global g;
  return g;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// The rank for messages: known after init, else the environment's, else "?".
std::string rank_text() {
  if (global().rank >= 0) return std::to_string(global().rank);
  std::string r = env("RANK");
  return r.empty() ? "?" : r;
}
std::string prefix(const std::string& op) { return "[" + op + "] rank " + rank_text() + ": "; }

std::string join(const std::vector<int>& v) {
  if (v.empty()) return "none";
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return "SUM";
    case ReduceOp::AVG:
      return "AVG";
    case ReduceOp::PRODUCT:
      return "PRODUCT";
    case ReduceOp::MIN:
      return "MIN";
    case ReduceOp::MAX:
      return "MAX";
  }
  return "?";
}

std::string describe(const Tensor& t) {
  std::ostringstream os;
  os << dtype_name(t.dtype()) << " " << t.sizes();
  return os.str();
}

}  // namespace

// ---- ProcessGroup -----------------------------------------------------------------------------

class ProcessGroup {
 public:
  int id = 0;
  std::vector<int> ranks;  // global ranks, in group-rank order
  int rank = -1;           // this process's rank in the group; -1 for a non-member
  std::string key_prefix;
  std::shared_ptr<TCPStore> store;
  std::chrono::milliseconds timeout{0};
  std::shared_ptr<detail::Comm> comm;  // reset on failure: peers then fail at once
  uint64_t seq = 0;
  uint64_t p2p_seq = 0;
  std::string failure;  // set once a collective broke the group
  bool destroyed = false;

  ~ProcessGroup() { stop(); }

  int size() const { return static_cast<int>(ranks.size()); }

  void start() {
    for (auto& w : workers_) w.start();
  }
  void stop() {
    for (auto& w : workers_) w.stop();
  }

  // Checks the group can take a collective now; op names it in errors.
  void check_usable(const std::string& op) {
    if (destroyed)
      throw Error(prefix(op) + "process group " + std::to_string(id) +
                  " was destroyed (destroy_process_group); collectives after destroy are errors");
    if (rank < 0)
      throw ValueError(prefix(op) + "this rank is not a member of group " + std::to_string(id) +
                       " (ranks " + join(ranks) + ")");
    std::lock_guard<std::mutex> lock(fail_mu_);
    if (!failure.empty())
      throw DistNetworkError(prefix(op) + "group " + std::to_string(id) +
                             " is broken by an earlier failure: " + failure);
  }

  // Queues body as the group's next collective (p2p: a point-to-point operation, which has a
  // sequence of its own). desc describes the call for the mismatch check and for errors.
  Work submit(const std::string& op, const std::string& desc, bool p2p, bool async_op,
              std::function<void(uint64_t, detail::Comm&)> body) {
    check_usable(op);
    uint64_t n = p2p ? ++p2p_seq : ++seq;
    if (!p2p)
      store->set_nowait(key_prefix + "seq/" + std::to_string(global_rank()), std::to_string(n));
    auto state = std::make_shared<Work::State>();
    auto job = [this, op, desc, p2p, n, body = std::move(body), state] {
      try {
        if (!p2p && global().detail) check_matches(op, desc, n);
        {
          std::shared_ptr<detail::Comm> c;
          {
            std::lock_guard<std::mutex> lock(fail_mu_);
            c = comm;
          }
          if (!c)
            throw DistNetworkError("the group's connections were closed by an earlier failure");
          body(n, *c);
        }
        state->finish(nullptr);
      } catch (const ValueError&) {
        state->finish(std::current_exception());
      } catch (const std::exception& e) {
        state->finish(std::make_exception_ptr(diagnose(op, desc, p2p, n, e.what())));
      }
    };
    // Sends and receives get workers of their own: a send waits for its peer's receive, which
    // must not wait behind it.
    workers_[!p2p ? 0 : (op == "send" ? 1 : 2)].push(std::move(job));
    Work work(state);
    if (!async_op) work.wait();
    return work;
  }

  int global_rank() const { return ranks[static_cast<size_t>(rank)]; }

 private:
  // A thread that runs its jobs one after another.
  struct Worker {
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool stopping = false;
    void start() {
      thread = std::thread([this] { run(); });
    }
    void push(std::function<void()> job) {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(std::move(job));
      cv.notify_all();
    }
    void stop() {
      {
        std::lock_guard<std::mutex> lock(mu);
        stopping = true;
        cv.notify_all();
      }
      if (thread.joinable()) thread.join();
    }
    void run() {
      for (;;) {
        std::function<void()> job;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [this] { return stopping || !queue.empty(); });
          if (queue.empty()) return;
          job = std::move(queue.front());
          queue.pop_front();
        }
        job();
      }
    }
  };

  // EMBER_DISTRIBUTED_DEBUG=DETAIL: every rank publishes what it called at this sequence number
  // and compares with the others before any data moves.
  void check_matches(const std::string& op, const std::string& desc, uint64_t n) {
    std::string base = key_prefix + "detail/" + std::to_string(n) + "/";
    store->set(base + std::to_string(global_rank()), desc);
    std::vector<std::string> keys;
    for (int r : ranks) keys.push_back(base + std::to_string(r));
    store->wait(keys, timeout);
    std::string listing;
    bool same = true;
    for (int r : ranks) {
      std::string other = store->get_string(base + std::to_string(r));
      same = same && other == desc;
      listing += "\n  rank " + std::to_string(r) + ": " + other;
    }
    if (!same)
      throw ValueError(prefix(op) + "collective #" + std::to_string(n) + " in group " +
                       std::to_string(id) +
                       " does not match across ranks (op, shape or dtype):" + listing);
  }

  // Turns a transport error into one that names the collective, its sequence number, the ranks
  // that reached it and those that did not, and a dead peer by its rank.
  Error diagnose(const std::string& op, const std::string& desc, bool p2p, uint64_t n,
                 const std::string& what) {
    {
      // Close this rank's connections so that peers waiting on it fail now, not at the timeout.
      std::lock_guard<std::mutex> lock(fail_mu_);
      comm.reset();
    }
    std::string head = prefix(op) + (p2p ? "point-to-point #" : "collective #") +
                       std::to_string(n) + " (" + desc + ") in group " + std::to_string(id);
    bool timed_out =
        what.find("imed out") != std::string::npos || what.find("imeout") != std::string::npos;
    std::vector<int> dead, arrived, missing;
    std::string store_note;
    try {
      auto saved = store->timeout();
      store->set_timeout(std::chrono::milliseconds(1000));
      // The store notices a closed connection a moment after the transport does.
      for (int i = 0; i < 20; ++i) {
        dead = store->dead_ranks();
        std::erase_if(dead, [this](int r) {
          return std::find(ranks.begin(), ranks.end(), r) == ranks.end();
        });
        if (!dead.empty() || timed_out) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
      if (!p2p) {
        for (int r : ranks) {
          std::string key = key_prefix + "seq/" + std::to_string(r);
          bool reached = store->check({key}) && std::stoull(store->get_string(key)) >= n;
          (reached ? arrived : missing).push_back(r);
        }
      }
      store->set_timeout(saved);
    } catch (const std::exception& e) {
      store_note = " The store on rank 0 did not answer (rank 0 is gone or stopped): " +
                   std::string(e.what()) + ".";
      if (dead.empty() && global_rank() != 0) dead.push_back(0);
    }
    std::string ranks_note;
    if (!p2p && (!arrived.empty() || !missing.empty()))
      ranks_note = " Ranks that reached #" + std::to_string(n) + ": " + join(arrived) +
                   "; ranks that did not: " + join(missing) + ".";
    std::string msg;
    std::lock_guard<std::mutex> lock(fail_mu_);
    if (!dead.empty()) {
      // The first to go is the cause; the others usually exited on the error it caused.
      std::string later = dead.size() > 1
                              ? " Ranks that exited after it: " +
                                    join(std::vector<int>(dead.begin() + 1, dead.end())) + "."
                              : "";
      msg = head + " failed: rank " + std::to_string(dead[0]) +
            " is gone (the process exited or was killed)." + later + ranks_note + store_note +
            " (transport: " + what + ")";
      failure = msg;
      return DistNetworkError(msg);
    }
    if (timed_out) {
      msg = head + " timed out after " + std::to_string(timeout.count()) + " ms." + ranks_note +
            store_note + " (transport: " + what + ")";
      failure = msg;
      return DistTimeoutError(msg);
    }
    msg = head + " failed." + ranks_note + store_note + " (transport: " + what + ")";
    failure = msg;
    return DistNetworkError(msg);
  }

  Worker workers_[3];  // collectives, sends, receives
  std::mutex fail_mu_;
};

// ---- init / destroy / groups ------------------------------------------------------------------

namespace {

Group resolve(const Group& group, const std::string& op) {
  if (group) return group;
  Global& g = global();
  if (!g.world) {
    if (g.destroyed)
      throw Error(prefix(op) +
                  "the default process group was destroyed "
                  "(destroy_process_group); collectives after destroy are errors");
    throw Error(prefix(op) +
                "the default process group is not initialized: call "
                "distributed::init_process_group first");
  }
  return g.world;
}

int parse_int(const std::string& text, const char* what) {
  try {
    size_t used = 0;
    int v = std::stoi(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  throw ValueError(prefix("init_process_group") + what + " is '" + text + "', not an integer");
}

Group make_group(int id, std::vector<int> ranks) {
  Global& g = global();
  auto pg = std::make_shared<ProcessGroup>();
  pg->id = id;
  pg->ranks = std::move(ranks);
  pg->key_prefix = "pg" + std::to_string(id) + "/";
  pg->store = g.store;
  pg->timeout = g.timeout;
  auto it = std::find(pg->ranks.begin(), pg->ranks.end(), g.rank);
  if (it != pg->ranks.end()) {
    pg->rank = static_cast<int>(it - pg->ranks.begin());
    try {
      pg->comm = detail::make_gloo_comm(*g.store, pg->key_prefix, pg->rank, pg->size(), g.timeout,
                                        g.hostname);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw DistNetworkError(prefix(id == 0 ? "init_process_group" : "new_group") +
                             "connecting the ranks of group " + std::to_string(id) +
                             " failed: " + e.what());
    }
    pg->start();
  }
  g.groups.push_back(pg);
  return pg;
}

}  // namespace

void init_process_group(const std::string& backend) { init_process_group(backend, {}); }

namespace {

// Gloo writes to its peers' sockets without MSG_NOSIGNAL: a write to a peer that just died would
// end this process with SIGPIPE instead of the error that names the dead rank. So SIGPIPE is
// ignored from the first process group on, unless the program installed its own handler.
void ignore_sigpipe_once() {
  static const bool done = [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      signal(SIGPIPE, SIG_IGN);
    }
    return true;
  }();
  (void)done;
}

}  // namespace

void init_process_group(const std::string& backend, InitOptions options) {
  ignore_sigpipe_once();
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.mu);
  const std::string op = "init_process_group";
  if (g.world) throw Error(prefix(op) + "the default process group is already initialized");
  if (backend == "nccl")
    throw NotImplementedError(prefix(op) +
                              "backend 'nccl' is not available in this build of ember; use "
                              "'gloo' (CPU tensors)");
  if (backend != "gloo" && backend != "auto")
    throw ValueError(prefix(op) + "unknown backend '" + backend + "' (expected 'gloo' or 'auto')");
  if (!detail::gloo_available())
    throw NotImplementedError(prefix(op) +
                              "this build of ember has no Gloo backend (libgloo-dev was not "
                              "found when it was configured; install it and rebuild)");

  int rank = options.rank;
  int world_size = options.world_size;
  if (rank < 0 && !env("RANK").empty()) rank = parse_int(env("RANK"), "RANK");
  if (world_size < 0 && !env("WORLD_SIZE").empty())
    world_size = parse_int(env("WORLD_SIZE"), "WORLD_SIZE");
  if (rank < 0)
    throw ValueError(prefix(op) +
                     "RANK is not set: launch with `ember run` (or torchrun), or set "
                     "RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
  if (world_size < 1)
    throw ValueError(prefix(op) +
                     "WORLD_SIZE is not set or below 1: launch with `ember run`, or "
                     "set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT");
  if (rank >= world_size)
    throw ValueError("[init_process_group] rank " + std::to_string(rank) + ": RANK " +
                     std::to_string(rank) + " is not below WORLD_SIZE " +
                     std::to_string(world_size));

  std::string addr = options.master_addr;
  int port = options.master_port;
  if (options.init_method.rfind("tcp://", 0) == 0) {
    std::string hp = options.init_method.substr(6);
    auto colon = hp.rfind(':');
    if (colon == std::string::npos)
      throw ValueError(prefix(op) + "init_method '" + options.init_method +
                       "' has no port (tcp://HOST:PORT)");
    if (addr.empty()) addr = hp.substr(0, colon);
    if (port < 0) port = parse_int(hp.substr(colon + 1), "the init_method's port");
  } else if (options.init_method != "env://") {
    throw ValueError(prefix(op) + "init_method '" + options.init_method +
                     "' is not supported (env:// or tcp://HOST:PORT)");
  }
  if (!options.store) {
    if (addr.empty()) addr = env("MASTER_ADDR");
    if (port < 0 && !env("MASTER_PORT").empty())
      port = parse_int(env("MASTER_PORT"), "MASTER_PORT");
    if (addr.empty())
      throw ValueError("[init_process_group] rank " + std::to_string(rank) +
                       ": MASTER_ADDR is not set: launch with `ember run` (or torchrun), or set "
                       "MASTER_ADDR and MASTER_PORT to rank 0's address");
    if (port < 0)
      throw ValueError("[init_process_group] rank " + std::to_string(rank) +
                       ": MASTER_PORT is not set: launch with `ember run` (or torchrun), or set "
                       "it to a free port on rank 0's host");
  }

  g.rank = rank;
  g.world_size = world_size;
  g.timeout = options.timeout;
  g.backend = "gloo";
  g.detail = env("EMBER_DISTRIBUTED_DEBUG") == "DETAIL";
  bool loopback =
      addr.empty() || addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
  if (loopback) {
    g.hostname = "127.0.0.1";
  } else {
    char host[256] = {0};
    ::gethostname(host, sizeof(host) - 1);
    g.hostname = host;
  }
  try {
    if (options.store) {
      g.store = options.store;
    } else {
      TCPStoreOptions so;
      so.port = port;
      so.is_master = rank == 0;
      so.timeout = options.timeout;
      so.rank = rank;
      g.store = std::make_shared<TCPStore>(addr, so);
    }
    g.world = make_group(0, [&] {
      std::vector<int> all(static_cast<size_t>(world_size));
      for (int i = 0; i < world_size; ++i) all[static_cast<size_t>(i)] = i;
      return all;
    }());
  } catch (const std::exception& e) {
    g.world.reset();
    g.groups.clear();
    g.store.reset();
    std::string what = e.what();
    if (what.rfind("[init_process_group]", 0) == 0) throw;
    throw DistNetworkError(prefix(op) + "rendezvous at " + addr + ":" + std::to_string(port) +
                           " failed: " + what);
  }
  g.next_group_id = 1;
  g.destroyed = false;
}

void destroy_process_group(Group group) {
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.mu);
  if (group && group != g.world) {
    group->stop();
    group->comm.reset();
    group->destroyed = true;
    return;
  }
  if (!g.world)
    throw Error(prefix("destroy_process_group") + "the default process group is not initialized");
  for (auto& weak : g.groups) {
    if (auto pg = weak.lock()) {
      pg->stop();
      pg->comm.reset();
      pg->destroyed = true;
    }
  }
  g.groups.clear();
  g.world.reset();
  try {
    if (g.store && g.rank != 0) g.store->goodbye();
  } catch (const std::exception&) {
  }
  g.store.reset();
  g.destroyed = true;
}

bool is_initialized() { return global().world != nullptr; }

int get_rank(Group group) {
  Group pg = resolve(group, "get_rank");
  return pg->rank;
}
int get_world_size(Group group) {
  Group pg = resolve(group, "get_world_size");
  return pg->rank < 0 ? -1 : pg->size();
}
std::string get_backend(Group group) {
  resolve(group, "get_backend");
  return global().backend;
}
std::shared_ptr<TCPStore> default_store() {
  resolve(nullptr, "default_store");
  return global().store;
}
uint64_t get_sequence_number(Group group) { return resolve(group, "get_sequence_number")->seq; }

Group new_group(const std::vector<int>& ranks) {
  resolve(nullptr, "new_group");
  Global& g = global();
  std::lock_guard<std::mutex> lock(g.mu);
  std::vector<int> sorted = ranks;
  if (sorted.empty())
    for (int i = 0; i < g.world_size; ++i) sorted.push_back(i);
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= g.world_size)
      throw ValueError(prefix("new_group") + "rank " + std::to_string(sorted[i]) +
                       " is not in the world (size " + std::to_string(g.world_size) + ")");
    if (i && sorted[i] == sorted[i - 1])
      throw ValueError(prefix("new_group") + "rank " + std::to_string(sorted[i]) +
                       " is listed twice");
  }
  return make_group(g.next_group_id++, sorted);
}

// ---- collectives ------------------------------------------------------------------------------

namespace {

void check_tensor(const Tensor& t, const std::string& op, const char* what = "tensor") {
  if (!t.defined()) throw ValueError(prefix(op) + what + " is undefined");
  if (!t.device().is_cpu())
    throw ValueError(prefix(op) + what + " is on " + t.device().str() +
                     ", but the group's backend is Gloo, which takes CPU tensors (move it with "
                     ".cpu(); this build has no NCCL backend)");
  if (!t.is_contiguous())
    throw ValueError(prefix(op) + what + " (" + describe(t) +
                     ") is not contiguous: call .contiguous() first");
}

void check_peer(const Group& pg, int peer, const std::string& op, const char* role) {
  if (peer < 0 || peer >= pg->size())
    throw ValueError(prefix(op) + role + " " + std::to_string(peer) + " is not a rank of the " +
                     "group (size " + std::to_string(pg->size()) + ")");
}

}  // namespace

Work all_reduce(Tensor& tensor, ReduceOp op, bool async_op, Group group) {
  const std::string name = "all_reduce";
  Group pg = resolve(group, name);
  check_tensor(tensor, name);
  if (op == ReduceOp::AVG && !is_floating_point(tensor.dtype()))
    throw TypeError(prefix(name) + "ReduceOp.AVG needs a floating-point tensor, got " +
                    describe(tensor));
  std::string desc = name + "(" + op_name(op) + ") on " + describe(tensor);
  Tensor t = tensor;
  return pg->submit(name, desc, false, async_op,
                    [me = pg->rank, t, op](uint64_t n, detail::Comm& c) {
                      c.all_reduce(t.data_ptr(), static_cast<size_t>(t.numel()), t.dtype(), op,
                                   static_cast<uint32_t>(n));
                    });
}

Work broadcast(Tensor& tensor, int src, bool async_op, Group group) {
  const std::string name = "broadcast";
  Group pg = resolve(group, name);
  check_tensor(tensor, name);
  check_peer(pg, src, name, "src");
  std::string desc = name + "(src " + std::to_string(src) + ") on " + describe(tensor);
  Tensor t = tensor;
  return pg->submit(name, desc, false, async_op,
                    [me = pg->rank, t, src](uint64_t n, detail::Comm& c) {
                      c.broadcast(t.data_ptr(), static_cast<size_t>(t.numel()), t.dtype(), src,
                                  static_cast<uint32_t>(n));
                    });
}

Work reduce(Tensor& tensor, int dst, ReduceOp op, bool async_op, Group group) {
  const std::string name = "reduce";
  Group pg = resolve(group, name);
  check_tensor(tensor, name);
  check_peer(pg, dst, name, "dst");
  if (op == ReduceOp::AVG && !is_floating_point(tensor.dtype()))
    throw TypeError(prefix(name) + "ReduceOp.AVG needs a floating-point tensor, got " +
                    describe(tensor));
  std::string desc =
      name + "(" + op_name(op) + ", dst " + std::to_string(dst) + ") on " + describe(tensor);
  Tensor t = tensor;
  return pg->submit(name, desc, false, async_op,
                    [me = pg->rank, t, dst, op](uint64_t n, detail::Comm& c) {
                      std::vector<uint8_t> tmp(t.nbytes());
                      if (!tmp.empty()) std::memcpy(tmp.data(), t.data_ptr(), tmp.size());
                      c.all_reduce(tmp.data(), static_cast<size_t>(t.numel()), t.dtype(), op,
                                   static_cast<uint32_t>(n));
                      if (me == dst && !tmp.empty())
                        std::memcpy(t.data_ptr(), tmp.data(), tmp.size());
                    });
}

Work all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op, Group group) {
  const std::string name = "all_gather";
  Group pg = resolve(group, name);
  check_tensor(input, name, "input");
  pg->check_usable(name);
  if (outputs.empty())
    for (int i = 0; i < pg->size(); ++i) outputs.push_back(empty_like(input));
  if (static_cast<int>(outputs.size()) != pg->size())
    throw ValueError(prefix(name) + "got " + std::to_string(outputs.size()) +
                     " output tensors for a group of " + std::to_string(pg->size()) + " ranks");
  for (auto& o : outputs) {
    check_tensor(o, name, "an output");
    if (o.dtype() != input.dtype() || o.numel() != input.numel())
      throw ValueError(prefix(name) + "output " + describe(o) + " does not match input " +
                       describe(input));
  }
  std::string desc = name + " on " + describe(input);
  std::vector<Tensor> outs = outputs;
  return pg->submit(
      name, desc, false, async_op, [me = pg->rank, outs, input](uint64_t n, detail::Comm& c) {
        size_t bytes = input.nbytes();
        std::vector<uint8_t> flat(bytes * outs.size());
        c.all_gather(input.data_ptr(), flat.data(), static_cast<size_t>(input.numel()),
                     input.dtype(), static_cast<uint32_t>(n));
        for (size_t i = 0; i < outs.size(); ++i)
          if (bytes) std::memcpy(outs[i].data_ptr(), flat.data() + i * bytes, bytes);
      });
}

Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op, Group group) {
  const std::string name = "all_gather_into_tensor";
  Group pg = resolve(group, name);
  check_tensor(input, name, "input");
  check_tensor(output, name, "output");
  pg->check_usable(name);
  if (output.dtype() != input.dtype() || output.numel() != input.numel() * pg->size())
    throw ValueError(prefix(name) + "output " + describe(output) + " must hold world_size (" +
                     std::to_string(pg->size()) + ") times input " + describe(input));
  std::string desc = name + " on " + describe(input);
  Tensor out = output;
  return pg->submit(
      name, desc, false, async_op, [me = pg->rank, out, input](uint64_t n, detail::Comm& c) {
        c.all_gather(input.data_ptr(), out.data_ptr(), static_cast<size_t>(input.numel()),
                     input.dtype(), static_cast<uint32_t>(n));
      });
}

Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op, bool async_op,
                           Group group) {
  const std::string name = "reduce_scatter_tensor";
  Group pg = resolve(group, name);
  check_tensor(input, name, "input");
  check_tensor(output, name, "output");
  pg->check_usable(name);
  if (output.dtype() != input.dtype() || input.numel() != output.numel() * pg->size())
    throw ValueError(prefix(name) + "input " + describe(input) + " must hold world_size (" +
                     std::to_string(pg->size()) + ") times output " + describe(output));
  if (op == ReduceOp::AVG && !is_floating_point(input.dtype()))
    throw TypeError(prefix(name) + "ReduceOp.AVG needs a floating-point tensor, got " +
                    describe(input));
  std::string desc = name + "(" + op_name(op) + ") on " + describe(input);
  Tensor out = output;
  return pg->submit(
      name, desc, false, async_op, [me = pg->rank, out, input, op](uint64_t n, detail::Comm& c) {
        std::vector<uint8_t> tmp(input.nbytes());
        if (!tmp.empty()) std::memcpy(tmp.data(), input.data_ptr(), tmp.size());
        c.all_reduce(tmp.data(), static_cast<size_t>(input.numel()), input.dtype(), op,
                     static_cast<uint32_t>(n));
        size_t bytes = out.nbytes();
        if (bytes) std::memcpy(out.data_ptr(), tmp.data() + static_cast<size_t>(me) * bytes, bytes);
      });
}

Work barrier_async(Group group) {
  Group pg = resolve(group, "barrier");
  return pg->submit("barrier", "barrier", false, true,
                    [](uint64_t n, detail::Comm& c) { c.barrier(static_cast<uint32_t>(n)); });
}
void barrier(Group group) { barrier_async(std::move(group)).wait(); }

namespace {

constexpr uint64_t kP2PSlot = 0x7fULL << 56;

}  // namespace

Work isend(const Tensor& tensor, int dst, Group group, int tag) {
  const std::string name = "send";
  Group pg = resolve(group, name);
  check_tensor(tensor, name);
  check_peer(pg, dst, name, "dst");
  if (dst == pg->rank) throw ValueError(prefix(name) + "cannot send to itself");
  std::string desc = "send to " + std::to_string(dst) + " of " + describe(tensor);
  Tensor t = tensor;
  return pg->submit(name, desc, true, true,
                    [me = pg->rank, t, dst, tag](uint64_t, detail::Comm& c) {
                      c.send(t.data_ptr(), t.nbytes(), dst, kP2PSlot | static_cast<uint32_t>(tag));
                    });
}
Work irecv(Tensor& tensor, int src, Group group, int tag) {
  const std::string name = "recv";
  Group pg = resolve(group, name);
  check_tensor(tensor, name);
  check_peer(pg, src, name, "src");
  if (src == pg->rank) throw ValueError(prefix(name) + "cannot receive from itself");
  std::string desc = "recv from " + std::to_string(src) + " into " + describe(tensor);
  Tensor t = tensor;
  return pg->submit(name, desc, true, true,
                    [me = pg->rank, t, src, tag](uint64_t, detail::Comm& c) {
                      c.recv(t.data_ptr(), t.nbytes(), src, kP2PSlot | static_cast<uint32_t>(tag));
                    });
}
void send(const Tensor& tensor, int dst, Group group, int tag) {
  isend(tensor, dst, std::move(group), tag).wait();
}
void recv(Tensor& tensor, int src, Group group, int tag) {
  irecv(tensor, src, std::move(group), tag).wait();
}

}  // namespace ember::distributed
