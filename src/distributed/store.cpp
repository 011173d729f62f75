// TCPStore: a single-threaded poll() server hosted by one process and a blocking client. Waiting
// requests (get, wait) are parked on the server with their deadline, so a timeout never leaves a
// late answer on the connection.
#include "ember/distributed/store.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace ember::distributed {

namespace {

using Clock = std::chrono::steady_clock;
using Bytes = std::vector<uint8_t>;

enum Cmd : uint8_t {
  kSet = 1,
  kSetNoReply,
  kGet,
  kAdd,
  kWait,
  kCompareSet,
  kDelete,
  kCheck,
  kNumKeys,
  kHello,
  kGoodbye,
  kDeadRanks
};
enum Status : uint8_t { kOk = 0, kTimeout = 1 };

// ---- wire format: u8 command, then u32-length-prefixed fields and i64 numbers ----------------

void put_u32(Bytes& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_i64(Bytes& b, int64_t v) {
  for (int i = 0; i < 8; ++i)
    b.push_back(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
}
void put_bytes(Bytes& b, const void* p, size_t n) {
  put_u32(b, static_cast<uint32_t>(n));
  auto* c = static_cast<const uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}
void put_str(Bytes& b, const std::string& s) { put_bytes(b, s.data(), s.size()); }

// Reads from a buffer; ok() turns false when the message is not complete yet.
struct Reader {
  const uint8_t* p;
  size_t n;
  size_t pos = 0;
  bool good = true;
  bool need(size_t k) {
    if (pos + k > n) good = false;
    return good;
  }
  uint8_t u8() { return need(1) ? p[pos++] : 0; }
  uint32_t u32() {
    if (!need(4)) return 0;
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[pos + i]) << (8 * i);
    pos += 4;
    return v;
  }
  int64_t i64() {
    if (!need(8)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[pos + i]) << (8 * i);
    pos += 8;
    return static_cast<int64_t>(v);
  }
  Bytes bytes() {
    uint32_t k = u32();
    if (!good || !need(k)) return {};
    Bytes out(p + pos, p + pos + k);
    pos += k;
    return out;
  }
  std::string str() {
    Bytes b = bytes();
    return std::string(b.begin(), b.end());
  }
};

std::string errno_text() { return std::strerror(errno); }

void write_all(int fd, const Bytes& b) {
  size_t off = 0;
  while (off < b.size()) {
    ssize_t k = ::send(fd, b.data() + off, b.size() - off, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) throw DistNetworkError("[TCPStore] send failed: " + errno_text());
    off += static_cast<size_t>(k);
  }
}

int64_t ms_until(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max<int64_t>(0, left.count());
}

}  // namespace

// ---- server -----------------------------------------------------------------------------------

class StoreServer {
 public:
  explicit StoreServer(int port) {
    listen_fd_ = ::socket(AF_INET6, SOCK_STREAM, 0);
    bool v6 = listen_fd_ >= 0;
    if (!v6) listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (listen_fd_ < 0) throw DistNetworkError("[TCPStore] socket: " + errno_text());
    int one = 1, zero = 0;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc;
    if (v6) {
      ::setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_any;
      a.sin6_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_ANY);
      a.sin_port = htons(static_cast<uint16_t>(port));
      rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    if (rc != 0) {
      std::string why = errno == EADDRINUSE ? "is in use (another job, or a previous run still "
                                              "exiting? choose another MASTER_PORT)"
                                            : "cannot be bound: " + errno_text();
      ::close(listen_fd_);
      throw DistNetworkError("[TCPStore] port " + std::to_string(port) + " " + why);
    }
    if (::listen(listen_fd_, 1024) != 0) {
      ::close(listen_fd_);
      throw DistNetworkError("[TCPStore] listen: " + errno_text());
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (::pipe(wake_) != 0) throw DistNetworkError("[TCPStore] pipe: " + errno_text());
    thread_ = std::thread([this] { loop(); });
  }
  ~StoreServer() {
    char c = 0;
    [[maybe_unused]] auto k = ::write(wake_[1], &c, 1);
    thread_.join();
    for (auto& [fd, cl] : clients_) ::close(fd);
    ::close(listen_fd_);
    ::close(wake_[0]);
    ::close(wake_[1]);
  }
  int port() const { return port_; }

 private:
  struct Client {
    Bytes in;
    int rank = -1;
    bool said_goodbye = false;
  };
  struct Waiter {
    int fd;
    uint8_t cmd;  // kGet or kWait
    std::vector<std::string> keys;
    Clock::time_point deadline;
  };

  void loop() {
    for (;;) {
      std::vector<pollfd> fds;
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (auto& [fd, cl] : clients_) fds.push_back({fd, POLLIN, 0});
      int timeout = -1;
      for (auto& w : waiters_) {
        int64_t t = ms_until(w.deadline);
        timeout = timeout < 0 ? static_cast<int>(t) : std::min(timeout, static_cast<int>(t));
      }
      int rc = ::poll(fds.data(), fds.size(), timeout);
      if (rc < 0 && errno != EINTR) return;
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd >= 0) {
          int one = 1;
          ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          clients_[fd] = Client{};
        }
      }
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        int fd = fds[i].fd;
        uint8_t buf[65536];
        ssize_t k = ::recv(fd, buf, sizeof(buf), 0);
        if (k <= 0) {
          drop(fd);
          continue;
        }
        Client& cl = clients_[fd];
        cl.in.insert(cl.in.end(), buf, buf + k);
        if (!serve(fd)) drop(fd);
      }
      expire_waiters();
    }
  }

  void drop(int fd) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    if (it->second.rank >= 0 && !it->second.said_goodbye &&
        std::find(dead_.begin(), dead_.end(), it->second.rank) == dead_.end())
      dead_.push_back(it->second.rank);
    std::erase_if(waiters_, [fd](const Waiter& w) { return w.fd == fd; });
    ::close(fd);
    clients_.erase(it);
  }

  // Handles every complete request in the client's buffer; false on a broken request.
  bool serve(int fd) {
    Client& cl = clients_[fd];
    for (;;) {
      Reader r{cl.in.data(), cl.in.size()};
      uint8_t cmd = r.u8();
      if (!r.good) return true;
      Bytes reply;
      bool answer = true;
      switch (cmd) {
        case kSet:
        case kSetNoReply: {
          std::string key = r.str();
          Bytes value = r.bytes();
          if (!r.good) return true;
          data_[key] = std::move(value);
          reply.push_back(kOk);
          answer = cmd == kSet;
          break;
        }
        case kGet:
        case kWait: {
          std::vector<std::string> keys;
          uint32_t n = cmd == kGet ? 1 : r.u32();
          for (uint32_t i = 0; i < n && r.good; ++i) keys.push_back(r.str());
          int64_t timeout_ms = r.i64();
          if (!r.good) return true;
          waiters_.push_back(
              {fd, cmd, std::move(keys), Clock::now() + std::chrono::milliseconds(timeout_ms)});
          answer = false;
          break;
        }
        case kAdd: {
          std::string key = r.str();
          int64_t delta = r.i64();
          if (!r.good) return true;
          int64_t v = 0;
          auto it = data_.find(key);
          if (it != data_.end()) v = std::stoll(std::string(it->second.begin(), it->second.end()));
          v += delta;
          std::string s = std::to_string(v);
          data_[key] = Bytes(s.begin(), s.end());
          reply.push_back(kOk);
          put_i64(reply, v);
          break;
        }
        case kCompareSet: {
          std::string key = r.str();
          Bytes expected = r.bytes(), desired = r.bytes();
          if (!r.good) return true;
          auto it = data_.find(key);
          if (it == data_.end()) {
            if (expected.empty()) data_[key] = desired;
          } else if (it->second == expected) {
            it->second = desired;
          }
          reply.push_back(kOk);
          it = data_.find(key);
          Bytes now = it == data_.end() ? expected : it->second;
          put_bytes(reply, now.data(), now.size());
          break;
        }
        case kDelete: {
          std::string key = r.str();
          if (!r.good) return true;
          reply.push_back(kOk);
          reply.push_back(data_.erase(key) ? 1 : 0);
          break;
        }
        case kCheck: {
          uint32_t n = r.u32();
          bool all = true;
          for (uint32_t i = 0; i < n && r.good; ++i) all = data_.count(r.str()) && all;
          if (!r.good) return true;
          reply.push_back(kOk);
          reply.push_back(all ? 1 : 0);
          break;
        }
        case kNumKeys:
          reply.push_back(kOk);
          put_i64(reply, static_cast<int64_t>(data_.size()));
          break;
        case kHello: {
          int64_t rank = r.i64();
          if (!r.good) return true;
          cl.rank = static_cast<int>(rank);
          answer = false;
          break;
        }
        case kGoodbye:
          cl.said_goodbye = true;
          reply.push_back(kOk);
          break;
        case kDeadRanks:
          reply.push_back(kOk);
          put_u32(reply, static_cast<uint32_t>(dead_.size()));
          for (int d : dead_) put_i64(reply, d);
          break;
        default:
          return false;
      }
      cl.in.erase(cl.in.begin(), cl.in.begin() + static_cast<std::ptrdiff_t>(r.pos));
      if (answer) {
        try {
          write_all(fd, reply);
        } catch (const Error&) {
          return false;
        }
      }
      wake_waiters();
    }
  }

  void answer_waiter(const Waiter& w, bool timed_out) {
    Bytes reply;
    if (timed_out) {
      reply.push_back(kTimeout);
      std::vector<std::string> missing;
      for (auto& k : w.keys)
        if (!data_.count(k)) missing.push_back(k);
      put_u32(reply, static_cast<uint32_t>(missing.size()));
      for (auto& k : missing) put_str(reply, k);
    } else {
      reply.push_back(kOk);
      if (w.cmd == kGet) {
        const Bytes& v = data_[w.keys[0]];
        put_bytes(reply, v.data(), v.size());
      }
    }
    try {
      write_all(w.fd, reply);
    } catch (const Error&) {
    }
  }

  void wake_waiters() {
    for (size_t i = 0; i < waiters_.size();) {
      const Waiter& w = waiters_[i];
      bool ready = std::all_of(w.keys.begin(), w.keys.end(),
                               [this](const std::string& k) { return data_.count(k) > 0; });
      if (ready) {
        answer_waiter(w, false);
        waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  void expire_waiters() {
    wake_waiters();
    auto now = Clock::now();
    for (size_t i = 0; i < waiters_.size();) {
      if (waiters_[i].deadline <= now) {
        answer_waiter(waiters_[i], true);
        waiters_.erase(waiters_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::map<int, Client> clients_;
  std::vector<Waiter> waiters_;
  std::map<std::string, Bytes> data_;
  std::vector<int> dead_;  // in the order the connections closed
};

// ---- client -----------------------------------------------------------------------------------

struct TCPStore::Impl {
  std::string host;
  int port = 0;
  std::chrono::milliseconds timeout;
  int rank = -1;
  std::unique_ptr<StoreServer> server;
  int fd = -1;
  std::mutex mu;

  [[noreturn]] void lost() {
    throw DistNetworkError("[TCPStore] the connection to the store at " + host + ":" +
                           std::to_string(port) +
                           " was lost: its host (rank 0) exited or was killed");
  }

  void connect_to_store() {
    auto deadline = Clock::now() + timeout;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
    if (rc != 0)
      throw DistNetworkError("[TCPStore] cannot resolve host '" + host + "': " + gai_strerror(rc));
    std::string last = "no address";
    auto backoff = std::chrono::milliseconds(5);
    for (;;) {
      for (addrinfo* a = res; a; a = a->ai_next) {
        int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (s < 0) continue;
        if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) {
          int one = 1;
          ::setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
          fd = s;
          ::freeaddrinfo(res);
          return;
        }
        last = errno_text();
        ::close(s);
      }
      if (Clock::now() + backoff > deadline) break;
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
    }
    ::freeaddrinfo(res);
    throw DistTimeoutError("[TCPStore] no store answered at " + host + ":" + std::to_string(port) +
                           " within " + std::to_string(timeout.count()) + " ms (" + last +
                           "): is rank 0 running, and are MASTER_ADDR/MASTER_PORT right?");
  }

  // Reads exactly n bytes, giving up at the deadline.
  void read_exact(uint8_t* out, size_t n, Clock::time_point deadline) {
    size_t got = 0;
    while (got < n) {
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(ms_until(deadline), 1 << 30)));
      if (rc < 0 && errno == EINTR) continue;
      if (rc == 0)
        throw DistTimeoutError("[TCPStore] the store at " + host + ":" + std::to_string(port) +
                               " did not answer in time (is its host, rank 0, stopped?)");
      ssize_t k = ::recv(fd, out + got, n - got, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) lost();
      got += static_cast<size_t>(k);
    }
  }
  uint8_t read_u8(Clock::time_point d) {
    uint8_t v;
    read_exact(&v, 1, d);
    return v;
  }
  uint32_t read_u32(Clock::time_point d) {
    uint8_t b[4];
    read_exact(b, 4, d);
    return Reader{b, 4}.u32();
  }
  int64_t read_i64(Clock::time_point d) {
    uint8_t b[8];
    read_exact(b, 8, d);
    return Reader{b, 8}.i64();
  }
  Bytes read_bytes(Clock::time_point d) {
    Bytes b(read_u32(d));
    if (!b.empty()) read_exact(b.data(), b.size(), d);
    return b;
  }
  void send(const Bytes& msg) {
    try {
      write_all(fd, msg);
    } catch (const DistNetworkError&) {
      lost();
    }
  }
  // The deadline for an answer: the request's own wait plus a margin for the network.
  Clock::time_point answer_deadline(std::chrono::milliseconds wait) {
    return Clock::now() + wait + timeout + std::chrono::seconds(1);
  }
  // Waits for keys on the server; returns the value of the first when get is set.
  Bytes wait_keys(uint8_t cmd, const std::vector<std::string>& keys,
                  std::chrono::milliseconds wait) {
    Bytes msg{cmd};
    if (cmd == kWait) put_u32(msg, static_cast<uint32_t>(keys.size()));
    for (auto& k : keys) put_str(msg, k);
    put_i64(msg, wait.count());
    std::lock_guard<std::mutex> lock(mu);
    send(msg);
    auto d = answer_deadline(wait);
    if (read_u8(d) == kTimeout) {
      uint32_t n = read_u32(d);
      std::string missing;
      for (uint32_t i = 0; i < n; ++i) {
        Bytes k = read_bytes(d);
        missing += (i ? ", '" : "'") + std::string(k.begin(), k.end()) + "'";
      }
      throw DistTimeoutError("[TCPStore] " + std::string(cmd == kGet ? "get" : "wait") +
                             " timed out after " + std::to_string(wait.count()) +
                             " ms; keys never set: " + missing);
    }
    return cmd == kGet ? read_bytes(d) : Bytes{};
  }
};

TCPStore::TCPStore(std::string host, TCPStoreOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->timeout = options.timeout;
  impl_->rank = options.rank;
  if (options.port < 0 || options.port > 65535)
    throw ValueError("[TCPStore] port " + std::to_string(options.port) + " is out of range");
  if (options.is_master) {
    impl_->server = std::make_unique<StoreServer>(options.port);
    impl_->port = impl_->server->port();
  } else {
    impl_->port = options.port;
  }
  impl_->connect_to_store();
  if (options.rank >= 0) {
    Bytes msg{kHello};
    put_i64(msg, options.rank);
    impl_->send(msg);
  }
}

TCPStore::~TCPStore() {
  if (impl_->fd >= 0) ::close(impl_->fd);
}

void TCPStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  Bytes msg{kSet};
  put_str(msg, key);
  put_bytes(msg, value.data(), value.size());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  impl_->read_u8(impl_->answer_deadline({}));
}
void TCPStore::set(const std::string& key, const std::string& value) {
  set(key, Bytes(value.begin(), value.end()));
}
void TCPStore::set_nowait(const std::string& key, const std::string& value) {
  Bytes msg{kSetNoReply};
  put_str(msg, key);
  put_str(msg, value);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
}

std::vector<uint8_t> TCPStore::get(const std::string& key) {
  return impl_->wait_keys(kGet, {key}, impl_->timeout);
}
std::string TCPStore::get_string(const std::string& key) {
  Bytes b = get(key);
  return std::string(b.begin(), b.end());
}

int64_t TCPStore::add(const std::string& key, int64_t delta) {
  Bytes msg{kAdd};
  put_str(msg, key);
  put_i64(msg, delta);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  return impl_->read_i64(d);
}

std::vector<uint8_t> TCPStore::compare_set(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  Bytes msg{kCompareSet};
  put_str(msg, key);
  put_bytes(msg, expected.data(), expected.size());
  put_bytes(msg, desired.data(), desired.size());
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  return impl_->read_bytes(d);
}

void TCPStore::wait(const std::vector<std::string>& keys) { wait(keys, impl_->timeout); }
void TCPStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  impl_->wait_keys(kWait, keys, timeout);
}

bool TCPStore::check(const std::vector<std::string>& keys) {
  Bytes msg{kCheck};
  put_u32(msg, static_cast<uint32_t>(keys.size()));
  for (auto& k : keys) put_str(msg, k);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  return impl_->read_u8(d) != 0;
}

bool TCPStore::delete_key(const std::string& key) {
  Bytes msg{kDelete};
  put_str(msg, key);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  return impl_->read_u8(d) != 0;
}

int64_t TCPStore::num_keys() {
  Bytes msg{kNumKeys};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  return impl_->read_i64(d);
}

std::vector<int> TCPStore::dead_ranks() {
  Bytes msg{kDeadRanks};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  auto d = impl_->answer_deadline({});
  impl_->read_u8(d);
  uint32_t n = impl_->read_u32(d);
  std::vector<int> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(static_cast<int>(impl_->read_i64(d)));
  return out;
}

void TCPStore::goodbye() {
  Bytes msg{kGoodbye};
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->send(msg);
  impl_->read_u8(impl_->answer_deadline({}));
}

void TCPStore::set_timeout(std::chrono::milliseconds timeout) { impl_->timeout = timeout; }
std::chrono::milliseconds TCPStore::timeout() const { return impl_->timeout; }
int TCPStore::port() const { return impl_->port; }
const std::string& TCPStore::host() const { return impl_->host; }

}  // namespace ember::distributed
