// The cuDNN switches of ember/backends.h (is_available lives with the CUDA backend).
#include <atomic>

#include "core/env_switch.h"
#include "ember/backends.h"

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
