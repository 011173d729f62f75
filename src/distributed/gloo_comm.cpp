// The Gloo communicator: Gloo's TCP transport connected through ember's TCPStore, with reduction
// functions for every ember dtype.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "distributed/comm.h"
#include "ember/half.h"

namespace ember::distributed::detail {

namespace {

// Gloo's rendezvous reads and writes through this view of the TCPStore.
class StoreAdapter : public gloo::rendezvous::Store {
 public:
  StoreAdapter(TCPStore& store, std::string prefix, std::chrono::milliseconds timeout)
      : store_(store), prefix_(std::move(prefix)), timeout_(timeout) {}
  void set(const std::string& key, const std::vector<char>& data) override {
    store_.set(prefix_ + key, std::vector<uint8_t>(data.begin(), data.end()));
  }
  std::vector<char> get(const std::string& key) override {
    store_.wait({prefix_ + key}, timeout_);
    auto v = store_.get(prefix_ + key);
    return std::vector<char>(v.begin(), v.end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& t) override {
    std::vector<std::string> full;
    for (auto& k : keys) full.push_back(prefix_ + k);
    store_.wait(full, t);
  }

 private:
  TCPStore& store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
};

// ---- reductions: c = a (op) b over n elements, in float for the 16-bit types ------------------

template <class T>
T combine(T a, T b, ReduceOp op) {
  if constexpr (std::is_same_v<T, bool>) {
    return (op == ReduceOp::PRODUCT || op == ReduceOp::MIN) ? (a && b) : (a || b);
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(combine(static_cast<float>(a), static_cast<float>(b), op));
  } else {
    switch (op) {
      case ReduceOp::SUM:
      case ReduceOp::AVG:
        return static_cast<T>(a + b);
      case ReduceOp::PRODUCT:
        return static_cast<T>(a * b);
      case ReduceOp::MIN:
        return std::min(a, b);
      case ReduceOp::MAX:
        return std::max(a, b);
    }
    return a;
  }
}

template <class T>
gloo::AllreduceOptions::Func reduce_fn(ReduceOp op) {
  return [op](void* c, const void* a, const void* b, size_t n) {
    auto* out = static_cast<T*>(c);
    auto* x = static_cast<const T*>(a);
    auto* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) out[i] = combine(x[i], y[i], op);
  };
}

// Calls f with a null pointer of the dtype's C++ type.
template <class F>
void visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Bool:
      return f(static_cast<bool*>(nullptr));
    case DType::UInt8:
      return f(static_cast<uint8_t*>(nullptr));
    case DType::Int8:
      return f(static_cast<int8_t*>(nullptr));
    case DType::Int32:
      return f(static_cast<int32_t*>(nullptr));
    case DType::Int64:
      return f(static_cast<int64_t*>(nullptr));
    case DType::Float16:
      return f(static_cast<Half*>(nullptr));
    case DType::BFloat16:
      return f(static_cast<BFloat16*>(nullptr));
    case DType::Float32:
      return f(static_cast<float*>(nullptr));
    case DType::Float64:
      return f(static_cast<double*>(nullptr));
  }
}

class GlooComm : public Comm {
 public:
  GlooComm(TCPStore& store, const std::string& prefix, int rank, int size,
           std::chrono::milliseconds timeout, const std::string& hostname)
      : size_(size), timeout_(timeout) {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    StoreAdapter adapter(store, prefix, timeout);
    context->connectFullMesh(adapter, device_);
    context_ = context;
  }

  void all_reduce(void* data, size_t n, DType dtype, ReduceOp op, uint32_t tag) override {
    visit_dtype(dtype, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      auto* p = static_cast<T*>(data);
      if (size_ > 1 && n > 0) {
        gloo::AllreduceOptions opts(context_);
        opts.setOutput(p, n);
        opts.setReduceFunction(reduce_fn<T>(op));
        opts.setTag(tag);
        opts.setTimeout(timeout_);
        gloo::allreduce(opts);
      }
      if (op == ReduceOp::AVG) {
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
          for (size_t i = 0; i < n; ++i) p[i] = T(static_cast<float>(p[i]) / size_);
        } else if constexpr (std::is_floating_point_v<T>) {
          for (size_t i = 0; i < n; ++i) p[i] = p[i] / static_cast<T>(size_);
        }
      }
    });
  }

  void broadcast(void* data, size_t n, DType dtype, int root, uint32_t tag) override {
    if (size_ == 1 || n == 0) return;
    gloo::BroadcastOptions opts(context_);
    opts.setOutput(static_cast<uint8_t*>(data), n * element_size(dtype));
    opts.setRoot(root);
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::broadcast(opts);
  }

  void all_gather(const void* in, void* out, size_t n, DType dtype, uint32_t tag) override {
    size_t bytes = n * element_size(dtype);
    if (size_ == 1 || n == 0) {
      if (bytes) std::memcpy(out, in, bytes);
      return;
    }
    gloo::AllgatherOptions opts(context_);
    opts.setInput(const_cast<uint8_t*>(static_cast<const uint8_t*>(in)), bytes);
    opts.setOutput(static_cast<uint8_t*>(out), bytes * static_cast<size_t>(size_));
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::allgather(opts);
  }

  void barrier(uint32_t tag) override {
    if (size_ == 1) return;
    gloo::BarrierOptions opts(context_);
    opts.setTag(tag);
    opts.setTimeout(timeout_);
    gloo::barrier(opts);
  }

  void send(const void* data, size_t bytes, int dst, uint64_t slot) override {
    auto buf = context_->createUnboundBuffer(const_cast<void*>(data), bytes);
    buf->send(dst, slot);
    if (!buf->waitSend(timeout_))
      throw DistTimeoutError("send to rank " + std::to_string(dst) + " did not complete");
  }
  void recv(void* data, size_t bytes, int src, uint64_t slot) override {
    auto buf = context_->createUnboundBuffer(data, bytes);
    buf->recv(src, slot);
    if (!buf->waitRecv(timeout_))
      throw DistTimeoutError("recv from rank " + std::to_string(src) + " did not complete");
  }

 private:
  int size_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
};

}  // namespace

std::unique_ptr<Comm> make_gloo_comm(TCPStore& store, const std::string& prefix, int rank, int size,
                                     std::chrono::milliseconds timeout,
                                     const std::string& hostname) {
  return std::make_unique<GlooComm>(store, prefix, rank, size, timeout, hostname);
}
bool gloo_available() { return true; }

}  // namespace ember::distributed::detail
