// CUDA matrix products through cuBLASLt: TFLOP/s of 4096^3 products in float32 (full precision
// and TF32), bfloat16 and float16 (also with a transposed operand), a batched product, and the
// latency of a small product of the MLP's size (the [bench_cuda_gemm] rows of
// bench/gpu/workloads.txt).
#include "gpu_bench.h"

using namespace ember;
using bench::input;
using bench::Workload;

namespace {

using Fn = std::function<void()>;

// "matmul" (shape MxKxN; t: A stored transposed) and "bmm" (shape BxMxKxN).
Fn product(const Workload& w) {
  const std::vector<int64_t>& s = w.shape;
  const bool batched = w.op == "bmm";
  if (s.size() != (batched ? 4u : 3u)) {
    throw std::runtime_error(w.name + ": " + w.op + " needs a shape of " +
                             (batched ? "BxMxKxN" : "MxKxN"));
  }
  Tensor a, b;
  if (batched) {
    a = input(w, {s[0], s[1], s[2]});
    b = input(w, {s[0], s[2], s[3]});
  } else {
    a = input(w, {s[0], s[1]}, true);
    b = input(w, {s[1], s[2]});
  }
  const std::string precision = w.opt("precision", "highest");
  return [a, b, precision] {
    set_float32_matmul_precision(precision);
    (void)matmul(a, b);
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, bench::Setup> ops = {{"matmul", product}, {"bmm", product}};
  const int rc = bench::run("bench_cuda_gemm", ops, argc, argv);
  set_float32_matmul_precision("highest");
  return rc;
}
