// Bandwidth of the CUDA element-wise, cast and copy kernels on large tensors (strided layouts
// included) and the launch latency of a tiny add: the [bench_cuda_elementwise] rows of
// bench/gpu/workloads.txt, next to a device-to-device copy of the same size.
#include "gpu_bench.h"

using namespace ember;
using bench::input;
using bench::Workload;

namespace {

using Fn = std::function<void()>;

// A binary op on two fresh inputs (the first transposed when the row says t).
bench::Setup binary(Tensor (*op)(const Tensor&, const Tensor&)) {
  return [op](const Workload& w) -> Fn {
    Tensor a = input(w, w.sizes(), true), b = input(w, w.sizes());
    return [op, a, b] { (void)op(a, b); };
  };
}

bench::Setup unary(Tensor (*op)(const Tensor&)) {
  return [op](const Workload& w) -> Fn {
    Tensor a = input(w, w.sizes(), true);
    return [op, a] { (void)op(a); };
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, bench::Setup> ops = {
      {"copy", bench::copy_op},
      {"add", binary([](const Tensor& a, const Tensor& b) { return add(a, b); })},
      {"mul", binary([](const Tensor& a, const Tensor& b) { return mul(a, b); })},
      {"mul_0d",
       [](const Workload& w) -> Fn {
         Tensor a = input(w, w.sizes()), s = input(w, Shape{});
         return [a, s] { (void)mul(a, s); };
       }},
      {"add_",
       [](const Workload& w) -> Fn {
         Tensor a = input(w, w.sizes()), b = input(w, w.sizes());
         return [a, b]() mutable { a.add_(b); };
       }},
      {"relu", unary([](const Tensor& a) { return relu(a); })},
      {"exp", unary([](const Tensor& a) { return exp(a); })},
      {"gelu", unary([](const Tensor& a) { return gelu(a); })},
      {"contiguous", unary([](const Tensor& a) { return a.contiguous(); })},
      {"cast",
       [](const Workload& w) -> Fn {
         Tensor a = input(w, w.sizes(), true);
         const DType to = bench::parse_dtype(w.opt("to"));
         return [a, to] { (void)a.to(to); };
       }},
  };
  return bench::run("bench_cuda_elementwise", ops, argc, argv);
}
