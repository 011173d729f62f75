// The emulated devices CUDA_VISIBLE_DEVICES selects, by index or by UUID as the real runtime does.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "shim_state.h"

namespace simt::detail {

namespace {

// What nvidia-smi would print as the UUID of emulated board d (cudaDeviceProp::uuid is d, 0, ...).
std::string emulated_uuid(int d) {
  char text[48];
  std::snprintf(text, sizeof text, "GPU-%02x000000-0000-0000-0000-000000000000", d & 0xff);
  return text;
}

}  // namespace

// The emulated boards this process sees, in CUDA's order: all `count` of them, or those that
// CUDA_VISIBLE_DEVICES names by index or by UUID prefix, up to the first entry that names none
// (the real runtime's rule).
std::vector<int> visible_devices(int count) {
  std::vector<int> all(count);
  for (int d = 0; d < count; ++d) all[d] = d;
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  if (env == nullptr) return all;
  std::vector<int> picked;
  std::string list(env);
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string::npos) comma = list.size();
    std::string entry = list.substr(start, comma - start);
    entry.erase(0, entry.find_first_not_of(" \t"));
    entry.erase(entry.find_last_not_of(" \t") + 1);
    int found = -1;
    if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string::npos) {
      const long v = std::strtol(entry.c_str(), nullptr, 10);
      if (v < count) found = static_cast<int>(v);
    } else if (entry.rfind("GPU-", 0) == 0 && entry.size() > 4) {
      for (int d = 0; d < count && found < 0; ++d) {
        if (emulated_uuid(d).rfind(entry, 0) == 0) found = d;
      }
    }
    if (found < 0 || std::find(picked.begin(), picked.end(), found) != picked.end()) break;
    picked.push_back(found);
    start = comma + 1;
  }
  return picked;
}

}  // namespace simt::detail
