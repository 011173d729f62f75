// The process-wide switches of ember/backends.h. Backends answer is_available() themselves (they
// know whether their library loaded); the switches only say what the user wants.
#include "core/switches.h"

#include <atomic>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/env_switch.h"
#include "ember/backends.h"
#include "ember/error.h"

namespace ember {

// ---- float32 matmul precision (PyTorch's set_float32_matmul_precision) -------------------------
// The CPU always computes in full float32; CUDA lets "high" and "medium" use TensorFloat-32.

namespace {
std::atomic<MatmulPrecision> g_precision{MatmulPrecision::Highest};
}  // namespace

MatmulPrecision float32_matmul_precision() { return g_precision.load(std::memory_order_relaxed); }

void set_float32_matmul_precision(const std::string& precision) {
  MatmulPrecision p;
  if (precision == "highest") {
    p = MatmulPrecision::Highest;
  } else if (precision == "high") {
    p = MatmulPrecision::High;
  } else if (precision == "medium") {
    p = MatmulPrecision::Medium;
  } else {
    throw ValueError(
        "[set_float32_matmul_precision] expected \"highest\", \"high\" or \"medium\", got \"" +
        precision + "\"");
  }
  g_precision.store(p, std::memory_order_relaxed);
}

std::string get_float32_matmul_precision() {
  switch (float32_matmul_precision()) {
    case MatmulPrecision::High:
      return "high";
    case MatmulPrecision::Medium:
      return "medium";
    default:
      return "highest";
  }
}

}  // namespace ember

// ---- cuDNN --------------------------------------------------------------------------------------

namespace ember::backends::cudnn {

namespace {

std::atomic<bool>& enabled_flag() {
  // EMBER_CUDNN=0 (or off, false) makes the default false.
  static std::atomic<bool> flag{env_switch_on("EMBER_CUDNN")};
  return flag;
}
std::atomic<bool> g_benchmark{false};
std::atomic<bool> g_deterministic{false};

}  // namespace

void set_enabled(bool enabled) { enabled_flag().store(enabled); }
bool enabled() { return enabled_flag().load(); }
void set_benchmark(bool benchmark) { g_benchmark.store(benchmark); }
bool benchmark() { return g_benchmark.load(); }
void set_deterministic(bool deterministic) { g_deterministic.store(deterministic); }
bool deterministic() { return g_deterministic.load(); }

FlagsGuard::FlagsGuard(bool enabled, bool benchmark, bool deterministic)
    : enabled_(cudnn::enabled()),
      benchmark_(cudnn::benchmark()),
      deterministic_(cudnn::deterministic()) {
  set_enabled(enabled);
  set_benchmark(benchmark);
  set_deterministic(deterministic);
}

FlagsGuard::~FlagsGuard() {
  set_enabled(enabled_);
  set_benchmark(benchmark_);
  set_deterministic(deterministic_);
}

}  // namespace ember::backends::cudnn

// ---- oneDNN (torch.backends.mkldnn) -------------------------------------------------------------

namespace ember::backends::mkldnn {

namespace {

std::atomic<bool>& enabled_flag() {
  // EMBER_ONEDNN=0 (or off, false) makes the default false.
  static std::atomic<bool> flag{env_switch_on("EMBER_ONEDNN")};
  return flag;
}

}  // namespace

void set_enabled(bool enabled) { enabled_flag().store(enabled); }
bool enabled() { return enabled_flag().load(std::memory_order_relaxed); }

FlagsGuard::FlagsGuard(bool enabled) : enabled_(mkldnn::enabled()) { set_enabled(enabled); }
FlagsGuard::~FlagsGuard() { set_enabled(enabled_); }

}  // namespace ember::backends::mkldnn

// ---- autocast -----------------------------------------------------------------------------------

namespace ember {

thread_local AutocastState t_autocast;

namespace {

struct CacheEntry {
  Tensor source;  // keeps the key's TensorImpl alive, so its address is not reused
  DType dtype;
  Tensor cast;
};
thread_local std::unordered_map<const TensorImpl*, std::vector<CacheEntry>> t_cast_cache;
thread_local size_t t_cast_cache_size = 0;

}  // namespace

const Tensor* autocast_cache_find(const Tensor& source, DType dtype) {
  auto it = t_cast_cache.find(source.impl_ptr().get());
  if (it == t_cast_cache.end()) return nullptr;
  for (const CacheEntry& e : it->second) {
    if (e.dtype == dtype) return &e.cast;
  }
  return nullptr;
}

void autocast_cache_store(const Tensor& source, DType dtype, const Tensor& cast) {
  t_cast_cache[source.impl_ptr().get()].push_back({source, dtype, cast});
  ++t_cast_cache_size;
}

void autocast_cache_clear() {
  t_cast_cache.clear();
  t_cast_cache_size = 0;
}

size_t autocast_cache_size() { return t_cast_cache_size; }

}  // namespace ember
