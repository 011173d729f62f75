// GPU reductions, softmax and scans: achieved bandwidth of full and per-dimension reductions,
// argmax, var, log-sum-exp, softmax and cumsum over the last dimension and dimension 0 (the
// [bench_cuda_reduce] rows of bench/gpu/workloads.txt), with a device-to-device copy of the same
// size as the roof.
#include "gpu_bench.h"

using namespace ember;
using bench::input;
using bench::Workload;

namespace {

using Fn = std::function<void()>;

// A reduction over the row's dims (all of them when it names none).
bench::Setup reduction(Tensor (*op)(const Tensor&, const std::vector<int64_t>&)) {
  return [op](const Workload& w) -> Fn {
    Tensor a = input(w, w.sizes());
    const std::vector<int64_t> dims = bench::dims_of(w);
    return [op, a, dims] { (void)op(a, dims); };
  };
}

// An op along one dimension (dim=D).
bench::Setup along(Tensor (*op)(const Tensor&, int64_t)) {
  return [op](const Workload& w) -> Fn {
    Tensor a = input(w, w.sizes());
    const int64_t dim = bench::dim_of(w);
    return [op, a, dim] { (void)op(a, dim); };
  };
}

}  // namespace

int main(int argc, char** argv) {
  const std::map<std::string, bench::Setup> ops = {
      {"copy", bench::copy_op},
      {"sum", reduction([](const Tensor& a, const std::vector<int64_t>& d) { return sum(a, d); })},
      {"mean",
       reduction([](const Tensor& a, const std::vector<int64_t>& d) { return mean(a, d); })},
      {"amax",
       reduction([](const Tensor& a, const std::vector<int64_t>& d) { return amax(a, d); })},
      {"var", reduction([](const Tensor& a, const std::vector<int64_t>& d) { return var(a, d); })},
      {"logsumexp",
       reduction([](const Tensor& a, const std::vector<int64_t>& d) { return logsumexp(a, d); })},
      {"argmax", along([](const Tensor& a, int64_t d) { return argmax(a, d); })},
      {"softmax", along([](const Tensor& a, int64_t d) { return softmax(a, d); })},
      {"log_softmax", along([](const Tensor& a, int64_t d) { return log_softmax(a, d); })},
      {"cumsum", along([](const Tensor& a, int64_t d) { return cumsum(a, d); })},
  };
  return bench::run("bench_cuda_reduce", ops, argc, argv);
}
