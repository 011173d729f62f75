// distributed: process groups and collectives with PyTorch's names (torch.distributed), over Gloo
// on CPU tensors. docs/distributed.md has the guide and the diagnostics.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "ember/distributed/store.h"
#include "ember/tensor.h"

namespace ember::distributed {

enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

// The handle of an asynchronous collective (async_op = true); a synchronous call returns one that
// is already complete. wait() rethrows the collective's error.
class Work {
 public:
  struct State;
  Work();
  explicit Work(std::shared_ptr<State> state);
  bool wait();  // blocks until done; true on success, throws the collective's error
  bool is_completed() const;
  bool is_success() const;  // completed without error

 private:
  std::shared_ptr<State> state_;
};

class ProcessGroup;
// A group of ranks; nullptr stands for the default (world) group, as None does in PyTorch.
using Group = std::shared_ptr<ProcessGroup>;

struct InitOptions {
  // "env://" reads MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (torchrun's environment); fields
  // set below override the environment. "tcp://HOST:PORT" gives the store's address.
  std::string init_method = "env://";
  std::string master_addr;
  int master_port = -1;
  int rank = -1;
  int world_size = -1;
  std::chrono::milliseconds timeout = std::chrono::minutes(30);  // Gloo's default, as PyTorch
  std::shared_ptr<TCPStore> store;  // an existing store (then master_addr/port are not used)
};

// backend: "gloo" (CPU tensors) or "auto" (Gloo for CPU tensors; this build has no NCCL backend).
void init_process_group(const std::string& backend);
void init_process_group(const std::string& backend, InitOptions options);
// Ends the group (all groups when group is nullptr); later collectives on it raise a named error.
void destroy_process_group(Group group = nullptr);
bool is_initialized();
int get_rank(Group group = nullptr);        // this process's rank in the group
int get_world_size(Group group = nullptr);  // the group's size
std::string get_backend(Group group = nullptr);
// Every rank of the world calls new_group with the same ranks; non-members get a group they
// cannot run collectives on (get_rank returns -1 there, as in PyTorch).
Group new_group(const std::vector<int>& ranks);
// The store the default group rendezvoused through.
std::shared_ptr<TCPStore> default_store();

// Collectives. Tensors: contiguous CPU tensors of any dtype, the same shape and dtype on every
// rank. Each call carries the group's next sequence number; errors name it (docs/distributed.md).
Work all_reduce(Tensor& tensor, ReduceOp op = ReduceOp::SUM, bool async_op = false,
                Group group = nullptr);
Work broadcast(Tensor& tensor, int src, bool async_op = false, Group group = nullptr);
// The reduction lands in dst's tensor; the other ranks' tensors are left as they were.
Work reduce(Tensor& tensor, int dst, ReduceOp op = ReduceOp::SUM, bool async_op = false,
            Group group = nullptr);
// outputs: world_size tensors shaped like input (resized when empty).
Work all_gather(std::vector<Tensor>& outputs, const Tensor& input, bool async_op = false,
                Group group = nullptr);
// output: (world_size * input.size(0), ...) - the inputs concatenated along dim 0.
Work all_gather_into_tensor(Tensor& output, const Tensor& input, bool async_op = false,
                            Group group = nullptr);
// input: (world_size * output.size(0), ...); rank r gets the reduction of block r.
Work reduce_scatter_tensor(Tensor& output, const Tensor& input, ReduceOp op = ReduceOp::SUM,
                           bool async_op = false, Group group = nullptr);
void barrier(Group group = nullptr);
Work barrier_async(Group group = nullptr);
// Point to point (dst/src: ranks in the group). send/recv block; isend/irecv return a Work.
void send(const Tensor& tensor, int dst, Group group = nullptr, int tag = 0);
void recv(Tensor& tensor, int src, Group group = nullptr, int tag = 0);
Work isend(const Tensor& tensor, int dst, Group group = nullptr, int tag = 0);
Work irecv(Tensor& tensor, int src, Group group = nullptr, int tag = 0);

// The sequence number of the group's last collective (0 before the first).
uint64_t get_sequence_number(Group group = nullptr);

}  // namespace ember::distributed
