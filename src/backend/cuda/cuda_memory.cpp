// ember::cuda memory statistics: the per-device caching allocators seen through PyTorch's API.
#include "cuda/caching_allocator.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::cuda {

namespace detail {
CachingAllocator& caching_allocator(int device);  // cuda_backend.cpp
}

namespace {
int64_t stat(int device, const char* key) {
  auto stats = detail::caching_allocator(device).memory_stats();
  auto it = stats.find(key);
  return it == stats.end() ? 0 : it->second;
}
}  // namespace

size_t memory_allocated(int device) { return stat(device, "allocated_bytes.all.current"); }
size_t max_memory_allocated(int device) { return stat(device, "allocated_bytes.all.peak"); }
size_t memory_reserved(int device) { return stat(device, "reserved_bytes.all.current"); }
size_t max_memory_reserved(int device) { return stat(device, "reserved_bytes.all.peak"); }
void reset_peak_memory_stats(int device) { detail::caching_allocator(device).reset_peak_stats(); }

void empty_cache() {
  for (int d = 0; d < device_count(); ++d) detail::caching_allocator(d).empty_cache();
}

std::map<std::string, int64_t> memory_stats(int device) {
  return detail::caching_allocator(device).memory_stats();
}

std::string memory_summary(int device, bool abbreviated) {
  return detail::caching_allocator(device).memory_summary(abbreviated);
}

void set_per_process_memory_fraction(double fraction, int device) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw ValueError("[set_per_process_memory_fraction] fraction must be in (0, 1], got " +
                     std::to_string(fraction));
  }
  detail::caching_allocator(device).set_memory_fraction(fraction);
}

}  // namespace ember::cuda
