// One libFuzzer executable per target: EMBER_FUZZ_TARGET names it (safetensors, checkpoint, idx).
#include <string>

#include "fuzz_targets.h"

namespace {
ember_fuzz::Target target() {
  ember_fuzz::Target t{};
  ember_fuzz::parse_target(EMBER_FUZZ_TARGET, &t);
  return t;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ember_fuzz::Target t = target();
  static const std::string path = ember_fuzz::scratch_path(t);
  ember_fuzz::run_one(t, data, size, path);
  return 0;
}
