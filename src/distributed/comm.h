// The communicator a process group drives: raw contiguous buffers, one call per collective. Gloo
// implements it (gloo_comm.cpp); a build without Gloo has a stub that names what is missing.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "ember/distributed.h"

namespace ember::distributed::detail {

class Comm {
 public:
  virtual ~Comm() = default;
  // In place over n elements; AVG divides the sum by the group's size.
  virtual void all_reduce(void* data, size_t n, DType dtype, ReduceOp op, uint32_t tag) = 0;
  virtual void broadcast(void* data, size_t n, DType dtype, int root, uint32_t tag) = 0;
  // out holds size * n elements, rank r's input at block r.
  virtual void all_gather(const void* in, void* out, size_t n, DType dtype, uint32_t tag) = 0;
  virtual void barrier(uint32_t tag) = 0;
  virtual void send(const void* data, size_t bytes, int dst, uint64_t slot) = 0;
  virtual void recv(void* data, size_t bytes, int src, uint64_t slot) = 0;
};

// Connects the ranks of one group through the store (keys under prefix). hostname: the local
// address the transport binds (loopback when the store is on this host).
std::unique_ptr<Comm> make_gloo_comm(TCPStore& store, const std::string& prefix, int rank, int size,
                                     std::chrono::milliseconds timeout,
                                     const std::string& hostname);
bool gloo_available();

}  // namespace ember::distributed::detail
