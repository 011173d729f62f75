// ember::cuda memory statistics: the per-device caching allocators seen through PyTorch's API.
#include "alloc/caching_allocator.h"
#include "alloc/host_allocator.h"
#include "backend/cuda/cuda_graph.h"
#include "ember/cuda.h"
#include "ember/error.h"
#include "ember/tensor.h"

namespace ember::alloc {
CachingAllocator& caching_allocator(int device);  // cuda_backend.cpp
CachingHostAllocator& host_allocator();           // cuda_backend.cpp
}  // namespace ember::alloc

namespace ember::cuda {

namespace {
int64_t stat(int device, const char* key) {
  auto stats = alloc::caching_allocator(device).memory_stats();
  auto it = stats.find(key);
  return it == stats.end() ? 0 : it->second;
}
}  // namespace

size_t memory_allocated(int device) { return stat(device, "allocated_bytes.all.current"); }
size_t max_memory_allocated(int device) { return stat(device, "allocated_bytes.all.peak"); }
size_t memory_reserved(int device) { return stat(device, "reserved_bytes.all.current"); }
size_t max_memory_reserved(int device) { return stat(device, "reserved_bytes.all.peak"); }
void reset_peak_memory_stats(int device) { alloc::caching_allocator(device).reset_peak_stats(); }

void empty_cache() {
  if (device_count() > 0) {
    cuda_detail::check_not_capturing(
        "empty_cache",
        "it waits for the device and frees device memory, which a capture forbids; call it "
        "before capturing or after capture_end()");
  }
  for (int d = 0; d < device_count(); ++d) alloc::caching_allocator(d).empty_cache();
  alloc::host_allocator().empty_cache();
}

std::map<std::string, int64_t> host_memory_stats() { return alloc::host_allocator().stats(); }

void record_stream(const Tensor& tensor, const Stream& stream) {
  if (!tensor.defined()) throw ValueError("[record_stream] the tensor is undefined");
  void* data = tensor.storage()->data();
  if (data == nullptr) return;  // no memory to protect
  const auto id = static_cast<alloc::StreamId>(stream.id());
  if (tensor.is_cuda()) {
    if (tensor.device().index() != stream.device_index()) {
      throw ValueError("[record_stream] the tensor is on " + tensor.device().str() +
                       " but the stream on cuda:" + std::to_string(stream.device_index()));
    }
    alloc::caching_allocator(stream.device_index()).record_stream(data, id);
    return;
  }
  if (!alloc::host_allocator().record_stream(data, stream.device_index(), id)) {
    throw ValueError(
        "[record_stream] expects a CUDA tensor or a pinned CPU tensor, got an "
        "unpinned tensor on " +
        tensor.device().str());
  }
}

std::map<std::string, int64_t> memory_stats(int device) {
  return alloc::caching_allocator(device).memory_stats();
}

std::string memory_summary(int device, bool abbreviated) {
  return alloc::caching_allocator(device).memory_summary(abbreviated);
}

void set_per_process_memory_fraction(double fraction, int device) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw ValueError("[set_per_process_memory_fraction] fraction must be in (0, 1], got " +
                     std::to_string(fraction));
  }
  alloc::caching_allocator(device).set_memory_fraction(fraction);
}

}  // namespace ember::cuda
