// The registry of loss-scaled gradients (a mutex-guarded map per owner; an atomic count keeps the
// check free while nothing is marked).
#include "nn/scaled_grads.h"

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "autograd/function.h"

namespace ember::nn::detail {

namespace {

// The marks hold the accumulators: a leaf keeps its AccumulateGrad only while a graph does, and
// the scaled loss's graph is usually gone by the time gradients are clipped.
using Marks = std::unordered_map<const autograd::Node*, std::shared_ptr<autograd::Node>>;

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, Marks> by_owner;
  std::atomic<int64_t> marked{0};

  void recount() {
    int64_t n = 0;
    for (const auto& [owner, marks] : by_owner) n += static_cast<int64_t>(marks.size());
    marked.store(n, std::memory_order_relaxed);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

// The leaf's gradient accumulator, or null when it has none yet.
std::shared_ptr<autograd::Node> accumulator_of(const Tensor& param) {
  if (!param.defined()) return nullptr;
  autograd::AutogradMeta* m = autograd::meta(param);
  return m == nullptr ? nullptr : m->grad_accumulator.lock();
}

}  // namespace

void mark_scaled_grads(const void* owner,
                       const std::vector<std::shared_ptr<autograd::Node>>& accumulators) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Marks& marks = r.by_owner[owner];
  for (const auto& node : accumulators) marks[node.get()] = node;
  r.recount();
}

void unmark_scaled_grads(const void* owner, const std::vector<Tensor>& params) {
  Registry& r = registry();
  if (r.marked.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.by_owner.find(owner);
  if (it == r.by_owner.end()) return;
  for (const Tensor& p : params) {
    if (auto acc = accumulator_of(p)) it->second.erase(acc.get());
  }
  r.recount();
}

void clear_scaled_grads(const void* owner) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.by_owner.erase(owner);
  r.recount();
}

int64_t first_scaled_grad(const std::vector<Tensor>& params) {
  Registry& r = registry();
  if (r.marked.load(std::memory_order_relaxed) == 0) return -1;
  std::lock_guard<std::mutex> lock(r.mutex);
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined() || !params[i].grad().defined()) continue;
    const auto acc = accumulator_of(params[i]);
    if (!acc) continue;
    for (const auto& [owner, marks] : r.by_owner) {
      if (marks.count(acc.get()) != 0) return static_cast<int64_t>(i);
    }
  }
  return -1;
}

}  // namespace ember::nn::detail
