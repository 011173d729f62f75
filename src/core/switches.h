// The process-wide switches that ops and backends read, kept in one place: the float32 matmul
// precision, cuDNN's and oneDNN's flags (all set through ember/backends.h), and autocast's
// thread-local state and cast cache (set through ember/amp.h, read by the op layer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/tensor.h"

namespace ember {

enum class MatmulPrecision : uint8_t { Highest, High, Medium };

// The current float32 matmul precision; one relaxed atomic load.
MatmulPrecision float32_matmul_precision();

// ---- autocast (thread-local) --------------------------------------------------------------------
// Per device type: whether autocast is on and its lower-precision dtype. `excluded` turns every
// device off while an op that autocast has already handled runs its body (and during backward),
// so the ops it calls inside are not cast again. `nesting` counts live amp::autocast guards: the
// cast cache is cleared when the outermost one exits.
struct AutocastState {
  bool enabled[2] = {false, false};  // indexed by DeviceType (CPU, CUDA)
  DType dtype[2] = {DType::BFloat16, DType::Float16};
  bool cache_enabled = true;
  bool excluded = false;
  int nesting = 0;
  uint64_t casts = 0;  // tensors cast so far on this thread (cache hits not counted)
};

extern thread_local AutocastState t_autocast;

// Whether an op on this device type is autocast now (one thread-local load).
inline bool autocast_on(DeviceType type) {
  return t_autocast.enabled[static_cast<int>(type)] && !t_autocast.excluded;
}

// RAII: autocast off on this thread for the scope (an op's body after its cast, the backward pass).
class AutocastExcludeGuard {
 public:
  AutocastExcludeGuard() : prev_(t_autocast.excluded) { t_autocast.excluded = true; }
  ~AutocastExcludeGuard() { t_autocast.excluded = prev_; }
  AutocastExcludeGuard(const AutocastExcludeGuard&) = delete;
  AutocastExcludeGuard& operator=(const AutocastExcludeGuard&) = delete;

 private:
  bool prev_;
};

// RAII: the autocast settings of an earlier moment, live again (not excluded) for the scope, cache
// off. Gradient checkpointing recomputes a forward pass inside backward (where autocast is
// excluded) and must cast as the original forward pass did.
class AutocastReplayGuard {
 public:
  explicit AutocastReplayGuard(const AutocastState& saved) : prev_(t_autocast) {
    for (int i = 0; i < 2; ++i) {
      t_autocast.enabled[i] = saved.enabled[i];
      t_autocast.dtype[i] = saved.dtype[i];
    }
    t_autocast.cache_enabled = false;
    t_autocast.excluded = saved.excluded;
  }
  ~AutocastReplayGuard() {
    for (int i = 0; i < 2; ++i) {
      t_autocast.enabled[i] = prev_.enabled[i];
      t_autocast.dtype[i] = prev_.dtype[i];
    }
    t_autocast.cache_enabled = prev_.cache_enabled;
    t_autocast.excluded = prev_.excluded;
  }
  AutocastReplayGuard(const AutocastReplayGuard&) = delete;
  AutocastReplayGuard& operator=(const AutocastReplayGuard&) = delete;

 private:
  AutocastState prev_;
};

// The cast cache of this thread: source tensor (a float32 leaf parameter) x dtype -> its cast.
// The entry holds the source too, so its TensorImpl address cannot be reused while cached.
const Tensor* autocast_cache_find(const Tensor& source, DType dtype);
void autocast_cache_store(const Tensor& source, DType dtype, const Tensor& cast);
void autocast_cache_clear();
size_t autocast_cache_size();

}  // namespace ember
