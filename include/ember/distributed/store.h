// distributed::TCPStore: a key-value store over TCP for rendezvous (PyTorch's c10d::TCPStore).
// One process hosts it (is_master); every process, the host included, is a client.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/error.h"

namespace ember::distributed {

// Raised when a store operation waits longer than its timeout; the message names the keys.
class DistTimeoutError : public Error {
 public:
  using Error::Error;
};
// Raised when a peer, or the store's host, is gone; the message names the rank where known.
class DistNetworkError : public Error {
 public:
  using Error::Error;
};

struct TCPStoreOptions {
  int port = 29500;        // 0 with is_master: any free port (read it back with port())
  bool is_master = false;  // this process hosts the store
  std::chrono::milliseconds timeout = std::chrono::seconds(300);  // connect, get and wait
  int rank = -1;  // when >= 0, the store reports this client's death as this rank's
};

class TCPStore {
 public:
  TCPStore(std::string host, TCPStoreOptions options = {});
  ~TCPStore();
  TCPStore(const TCPStore&) = delete;
  TCPStore& operator=(const TCPStore&) = delete;

  void set(const std::string& key, const std::vector<uint8_t>& value);
  void set(const std::string& key, const std::string& value);
  // Blocks until the key exists (up to the timeout), then returns its value.
  std::vector<uint8_t> get(const std::string& key);
  std::string get_string(const std::string& key);
  // Adds delta to the integer stored at key (0 when absent) and returns the new value.
  int64_t add(const std::string& key, int64_t delta);
  // Sets key to desired when its value is expected (or when it is absent and expected is empty);
  // returns the value the key holds afterwards.
  std::vector<uint8_t> compare_set(const std::string& key, const std::vector<uint8_t>& expected,
                                   const std::vector<uint8_t>& desired);
  // Blocks until every key exists; DistTimeoutError names the missing ones.
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  bool check(const std::vector<std::string>& keys);  // true when every key exists
  bool delete_key(const std::string& key);           // true when the key existed
  int64_t num_keys();

  void set_timeout(std::chrono::milliseconds timeout);
  std::chrono::milliseconds timeout() const;
  int port() const;
  const std::string& host() const;

  // Ranks (given in TCPStoreOptions::rank) whose connection closed without a clean goodbye, in
  // the order they went.
  std::vector<int> dead_ranks();
  // Tells the store this client leaves on purpose (it is then not reported dead).
  void goodbye();
  // A set that does not wait for the store's answer (ordered with this client's later calls).
  void set_nowait(const std::string& key, const std::string& value);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::distributed
