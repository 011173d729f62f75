// Run only in AddressSanitizer builds: a kernel writes one element past the end of a cudaMalloc
// buffer, and ASan must report the heap-buffer-overflow at the kernel's line in buggy.cu.
#include <cstdio>

#include "kernels.h"

int main() {
  const int n = 100;
  float* out = nullptr;
  if (cudaMalloc(reinterpret_cast<void**>(&out), n * sizeof(float)) != cudaSuccess) return 2;
  launch_off_by_one(out, n, nullptr);
  cudaDeviceSynchronize();
  std::printf("no report: the out-of-bounds write went unnoticed\n");
  return 1;
}
