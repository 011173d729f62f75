// Host <-> device transfers and the caching allocator on a GPU: H2D/D2H bandwidth from pageable
// and pinned host memory, device-to-device copy bandwidth, and the latency of an allocation and
// free served from the cache against one that goes to cudaMalloc/cudaFree every time.
// Workload names match bench/gpu/torch_reference.py, so the two print side by side.
#include <cstdio>
#include <string>

#include "gpu_bench.h"

using namespace ember;

namespace {

constexpr int64_t kElems = int64_t{64} << 20;  // 64M floats: 256 MiB
constexpr double kBytes = 4.0 * kElems;

template <typename T>
concept HasPinMemory = requires(const T& t) {
  t.pin_memory();
};

void transfer_rows(const char* host_kind, const Tensor& host, Tensor& dev) {
  const double h2d = bench::median_ms([&] { dev.copy_(host); }, 5, 5);
  bench::print_row(std::string("H2D ") + host_kind + " 256 MiB", kBytes / h2d / 1e6, "GB/s");
  Tensor out = host.clone();
  const double d2h = bench::median_ms([&] { out.copy_(dev); }, 5, 5);
  bench::print_row(std::string("D2H ") + host_kind + " 256 MiB", kBytes / d2h / 1e6, "GB/s");
}

// Pinned host memory, when Tensor has pin_memory() (a template so the call is only compiled
// where it exists).
template <typename T>
bool pinned_rows(const T& host, Tensor& dev) {
  if constexpr (HasPinMemory<T>) {
    T pinned = host.pin_memory();
    transfer_rows("pinned", pinned, dev);
    return true;
  } else {
    return false;
  }
}

}  // namespace

int main() {
  if (bench::skip_without_gpu("bench_cuda_transfer")) return 0;
  const Device gpu(kCUDA, 0);
  bench::print_header(("transfers and allocator on " + cuda::get_device_name(0)).c_str());

  Tensor host = full({kElems}, 1.5, TensorOptions(kFloat32));
  Tensor dev = empty({kElems}, TensorOptions(kFloat32).device(gpu));
  transfer_rows("pageable", host, dev);
  if (!pinned_rows(host, dev)) {
    std::printf("(no pinned rows: this build's Tensor has no pin_memory(); pageable only)\n");
  }

  Tensor dev2 = empty({kElems}, TensorOptions(kFloat32).device(gpu));
  const double d2d = bench::median_ms([&] { dev2.copy_(dev); });
  bench::print_row("copy D2D f32 64M", 2 * kBytes / d2d / 1e6, "GB/s", "read + write");

  // 1 MiB blocks: served from the cache after the first, or from the driver after empty_cache().
  const TensorOptions one_mib = TensorOptions(kFloat32).device(gpu);
  const double cached =
      bench::median_ms([&] { Tensor t = empty({int64_t{1} << 18}, one_mib); }, 1000, 5);
  bench::print_row("alloc+free 1 MiB (cached)", cached * 1e3, "us");
  const double raw = bench::median_ms(
      [&] {
        { Tensor t = empty({int64_t{1} << 18}, one_mib); }
        cuda::empty_cache();
      },
      100, 5);
  bench::print_row("alloc+free 1 MiB (cudaMalloc)", raw * 1e3, "us", "empty_cache() each time");
  return 0;
}
