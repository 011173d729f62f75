// The op-recording hook's state: the installed observer, the per-thread stack of scope names (for
// the allocator's call sites) and the autograd sequence counter.
#include "core/record_scope.h"

#include <string>
#include <vector>

namespace ember::record {

namespace {
std::atomic<Observer*> g_observer{nullptr};
std::atomic<int> g_name_users{0};
thread_local uint64_t t_sequence_nr = 0;
// Names of the open scopes of this thread (scopes open only while something observes them).
thread_local std::vector<std::string> t_names;
}  // namespace

bool set_observer(Observer* obs) {
  if (obs == nullptr) {
    if (g_observer.exchange(nullptr) != nullptr) detail::g_active.fetch_sub(1);
    return true;
  }
  Observer* expected = nullptr;
  if (!g_observer.compare_exchange_strong(expected, obs)) return false;
  detail::g_active.fetch_add(1);
  return true;
}

Observer* observer() { return g_observer.load(std::memory_order_acquire); }

void retain_names(bool on) {
  if (on) {
    g_name_users.fetch_add(1);
    detail::g_active.fetch_add(1);
  } else if (g_name_users.load() > 0) {
    g_name_users.fetch_sub(1);
    detail::g_active.fetch_sub(1);
  }
}

std::string_view current_name() {
  if (t_names.empty()) return {};
  return t_names.back();
}

uint64_t next_sequence_nr() { return t_sequence_nr++; }
uint64_t peek_sequence_nr() { return t_sequence_nr; }

void report_memory(const void* ptr, int64_t delta, Device device) {
  Observer* obs = observer();
  if (obs != nullptr && obs->wants_memory()) obs->memory(ptr, delta, device);
}

namespace detail {

void enter(const char* name, std::string_view dyn_name, Kind kind, uint64_t seq,
           const Tensor* const* inputs, size_t n) {
  std::string_view nm = name != nullptr ? std::string_view(name) : dyn_name;
  t_names.emplace_back(nm);
  if (Observer* obs = observer()) {
    Begin b;
    b.name = nm;
    b.kind = kind;
    b.sequence_nr = seq;
    b.inputs = inputs;
    b.num_inputs = n;
    obs->enter(b);
  }
}

void exit() {
  if (!t_names.empty()) t_names.pop_back();
  if (Observer* obs = observer()) obs->exit();
}

}  // namespace detail

}  // namespace ember::record
