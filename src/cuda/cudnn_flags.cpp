// The cuDNN switches of ember/backends.h (is_available lives with the CUDA backend).
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "ember/backends.h"

namespace ember::backends::cudnn {

namespace {

// EMBER_CUDNN=0 (or "off", "false") turns cuDNN off by default.
bool enabled_from_env() {
  const char* v = std::getenv("EMBER_CUDNN");
  if (v == nullptr) return true;
  return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0 || std::strcmp(v, "false") == 0);
}

std::atomic<bool>& enabled_flag() {
  static std::atomic<bool> flag{enabled_from_env()};
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
