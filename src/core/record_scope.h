// The op-recording hook: the RAII scope every op, backward node and user range opens, and the
// observer interface the profiler (a higher layer) implements. Costs one relaxed load and one
// predictable branch per op while nothing observes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "ember/device.h"

namespace ember {
class Tensor;
}

namespace ember::record {

enum class Kind : uint8_t { op, backward, user };

// What a scope hands the observer when it opens.
struct Begin {
  std::string_view name;
  Kind kind = Kind::op;
  // Forward ops: the sequence number the next autograd node made on this thread will take (the
  // node's backward scope reports the same number). Backward scopes: the node's own number.
  uint64_t sequence_nr = 0;
  const Tensor* const* inputs = nullptr;  // may hold undefined tensors
  size_t num_inputs = 0;
};

// Implemented above core (the profiler, the memory history). Called on the recording thread.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void enter(const Begin& begin) = 0;
  virtual void exit() = 0;
  // A storage of nbytes was allocated (delta > 0) or freed (delta < 0) on device.
  virtual void memory(const void* ptr, int64_t delta, Device device) = 0;
  // Whether memory() should be called at all (profile_memory).
  virtual bool wants_memory() const = 0;
};

namespace detail {
// Non-zero while an observer is installed or a scope-name user (memory history) is on.
inline std::atomic<int> g_active{0};
void enter(const char* name, std::string_view dyn_name, Kind kind, uint64_t seq,
           const Tensor* const* inputs, size_t n);
void exit();
}  // namespace detail

// True while anything wants op scopes; the only cost an op pays otherwise.
inline bool active() { return detail::g_active.load(std::memory_order_relaxed) != 0; }

// Installs the observer (one at a time; nullptr removes it). Returns false when another is set.
bool set_observer(Observer* observer);
Observer* observer();
// Keeps scopes open (for current_name) without an observer: the allocator's memory history.
void retain_names(bool on);
// The innermost open scope's name on this thread, "" outside any (valid until that scope closes).
std::string_view current_name();

// The autograd sequence counter of this thread: next() takes a number (each autograd node takes
// one), peek() reads the one the next node will take.
uint64_t next_sequence_nr();
uint64_t peek_sequence_nr();

// Reports an allocation (delta > 0) or free to the observer when it profiles memory.
void report_memory(const void* ptr, int64_t delta, Device device);

// An RAII range. Ops open it through EMBER_RECORD_OP; the autograd engine and
// profiler::record_function through begin().
class Scope {
 public:
  Scope() = default;
  Scope(const char* op, std::initializer_list<const Tensor*> inputs) {
    if (active()) [[unlikely]] {
      detail::enter(op, {}, Kind::op, peek_sequence_nr(), inputs.begin(), inputs.size());
      open_ = true;
    }
  }
  ~Scope() {
    if (open_) [[unlikely]]
      detail::exit();
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  // Opens a range with a name built at run time (call only when active()).
  void begin(std::string_view name, Kind kind, uint64_t seq,
             std::initializer_list<const Tensor*> inputs = {}) {
    detail::enter(nullptr, name, kind, seq, inputs.begin(), inputs.size());
    open_ = true;
  }
  void begin(std::string_view name, Kind kind, uint64_t seq, const Tensor* const* inputs,
             size_t n) {
    detail::enter(nullptr, name, kind, seq, inputs, n);
    open_ = true;
  }

 private:
  bool open_ = false;
};

}  // namespace ember::record

// Opens the op's record range for the rest of the enclosing block: EMBER_RECORD_OP("add", a, b).
#define EMBER_RECORD_OP_CAT2(a, b) a##b
#define EMBER_RECORD_OP_CAT(a, b) EMBER_RECORD_OP_CAT2(a, b)
#define EMBER_RECORD_OP(name, ...) \
  ::ember::record::Scope EMBER_RECORD_OP_CAT(ember_record_scope_, __LINE__)(name, {__VA_ARGS__})
