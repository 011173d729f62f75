// Host <-> device transfers and the caching allocator on a GPU: H2D/D2H bandwidth from pageable
// and pinned host memory (pinned copies non_blocking), and the latency of an allocation and free
// served from the cache against one that goes to cudaMalloc/cudaFree every time (the
// [bench_cuda_transfer] rows of bench/gpu/workloads.txt).
#include "gpu_bench.h"

using namespace ember;
using bench::Workload;

namespace {

using Fn = std::function<void()>;

// "h2d" / "d2h" with host=pageable|pinned.
Fn transfer(const Workload& w) {
  const std::string host_kind = w.opt("host", "pageable");
  if (host_kind != "pageable" && host_kind != "pinned") {
    throw std::runtime_error(w.name + ": host must be pageable or pinned");
  }
  const bool pinned = host_kind == "pinned";
  Tensor host = full(w.sizes(), 1.5, TensorOptions(w.dtype));
  if (pinned) host = host.pin_memory();
  Tensor dev = empty(w.sizes(), TensorOptions(w.dtype).device(Device(kCUDA, 0)));
  if (w.op == "h2d") return [dev, host, pinned]() mutable { dev.copy_(host, pinned); };
  return [dev, host, pinned]() mutable { host.copy_(dev, pinned); };
}

// "alloc": allocate and free a device tensor; `uncached` empties the cache every time.
Fn alloc(const Workload& w) {
  const Shape shape = w.sizes();
  const TensorOptions o = TensorOptions(w.dtype).device(Device(kCUDA, 0));
  if (w.has("uncached")) {
    return [shape, o] {
      { Tensor t = empty(shape, o); }
      cuda::empty_cache();
    };
  }
  return [shape, o] { Tensor t = empty(shape, o); };
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, bench::Setup> ops = {
      {"h2d", transfer}, {"d2h", transfer}, {"alloc", alloc}};
  return bench::run("bench_cuda_transfer", ops, argc, argv);
}
