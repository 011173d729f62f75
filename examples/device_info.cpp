// Which devices ember sees, and their properties: the first thing to run on a new machine.
#include <iostream>

#include <ember/ember.h>

int main() {
  using namespace ember;
  std::cout << "CUDA available: " << (cuda::is_available() ? "yes" : "no") << "\n";
  std::cout << "CUDA devices:   " << cuda::device_count() << "\n";
  for (int i = 0; i < cuda::device_count(); ++i) {
    const cuda::DeviceProperties p = cuda::get_device_properties(i);
    std::cout << "  cuda:" << i << "  " << p.name << ", compute capability " << p.major << "."
              << p.minor << ", " << p.total_memory / (1 << 20) << " MiB, "
              << p.multi_processor_count << " SMs\n";
  }
  // The best device: the GPU when there is one, else the CPU.
  const Device device = cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU);
  const Tensor x = ones({2, 3}, TensorOptions().device(device));
  std::cout << "a tensor on " << x.device().str() << ":\n" << x << "\n";
  return 0;
}
