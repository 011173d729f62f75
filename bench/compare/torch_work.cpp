// The comparison workloads written against libtorch's C++ API (ember_work.cpp is the same
// against ember): torch_work WORKLOAD THREADS [options]; one JSON line per run.
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/torch.h>

#include "common.h"

extern "C" void openblas_set_num_threads(int n);

namespace F = torch::nn::functional;

namespace {

using compare::Args;
using compare::Result;
using compare::time_reps;
using compare::Timing;

constexpr int kOps = 20000;

void add_small(const Args& args, Result& r, bool grad) {
  torch::Tensor a = torch::randn({8}, torch::TensorOptions().requires_grad(grad));
  torch::Tensor b = torch::randn({8});
  const Timing t = time_reps(args, [&] {
    for (int i = 0; i < kOps; ++i) {
      torch::Tensor c = a + b;
    }
  });
  r.add("ns_per_op", t.median_s / kOps * 1e9);
  r.add("cpu_ns_per_op", t.cpu_median_s / kOps * 1e9);
  r.add_timing(t);
}

void add_large(const Args& args, Result& r) {
  constexpr int64_t n = int64_t{16} << 20;
  torch::Tensor a = torch::randn({n});
  torch::Tensor b = torch::randn({n});
  torch::Tensor c = torch::empty({n});
  const Timing t = time_reps(args, [&] { torch::add_out(c, a, b); });
  r.add("gbps", 3.0 * 4 * n / t.median_s * 1e-9);
  r.add("ms", t.median_s * 1e3);
  r.add_timing(t);
  r.add("note", "torch::add_out(c, a, b)");
}

void sgemm(const Args& args, Result& r, int64_t n) {
  torch::Tensor a = torch::randn({n, n});
  torch::Tensor b = torch::randn({n, n});
  const Timing t = time_reps(args, [&] { torch::Tensor c = torch::mm(a, b); });
  r.add("gflops", 2.0 * n * n * n / t.median_s * 1e-9);
  r.add("ms", t.median_s * 1e3);
  r.add("cpu_ms", t.cpu_median_s * 1e3);
  r.add_timing(t);
}

template <class Model>
Timing train(const Args& args, Model& model, const torch::Tensor& x, const torch::Tensor& y,
             bool mse) {
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
  return time_reps(args, [&] {
    opt.zero_grad();
    torch::Tensor out = model->forward(x);
    torch::Tensor loss = mse ? F::mse_loss(out, y) : F::cross_entropy(out, y);
    loss.backward();
    opt.step();
  });
}

void report_step(Result& r, const Timing& t, int64_t batch) {
  r.add("ms_per_step", t.median_s * 1e3);
  r.add("cpu_ms_per_step", t.cpu_median_s * 1e3);
  r.add("samples_per_s", static_cast<double>(batch) / t.median_s);
  r.add_timing(t);
}

void mlp(const Args& args, Result& r) {
  constexpr int64_t batch = 128;
  torch::nn::Sequential model(torch::nn::Linear(784, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 512), torch::nn::ReLU(),
                              torch::nn::Linear(512, 10));
  const torch::Tensor x = torch::randn({batch, 784});
  const torch::Tensor y = torch::randint(0, 10, {batch});
  const Timing t = train(args, model, x, y, false);
  report_step(r, t, batch);
  const double flops = compare::mlp_step_flops(batch, {{784, 512}, {512, 512}, {512, 10}});
  r.add("gflops", flops / t.median_s * 1e-9);
}

void cnn(const Args& args, Result& r) {
  constexpr int64_t batch = 64;
  namespace nn = torch::nn;
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(),
                       nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                       nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(),
                       nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), nn::Linear(3136, 128),
                       nn::ReLU(), nn::Linear(128, 10));
  const torch::Tensor x = torch::randn({batch, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {batch});
  report_step(r, train(args, model, x, y, false), batch);
}

void transformer(const Args& args, Result& r) {
  constexpr int64_t seq = 128, batch = 16, d_model = 256;
  torch::nn::TransformerEncoderLayer layer(torch::nn::TransformerEncoderLayerOptions(d_model, 4));
  const torch::Tensor x = torch::randn({seq, batch, d_model});  // (S, N, E)
  const torch::Tensor target = torch::randn({seq, batch, d_model});
  const Timing t = train(args, layer, x, target, true);
  report_step(r, t, batch);
  r.add("tokens_per_s", static_cast<double>(seq * batch) / t.median_s);
}

// The line of show_config() that starts with `key`, without it.
std::string config_line(const std::string& key) {
  const std::string cfg = at::show_config();
  const size_t p = cfg.find(key);
  if (p == std::string::npos) return "(not reported)";
  const size_t b = p + key.size();
  return cfg.substr(b, cfg.find('\n', b) - b);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = compare::parse_args(argc, argv);
  // Intra-op threads (OpenMP in this build), no inter-op pool, and OpenBLAS's own pool, which
  // libtorch leaves at its default (all cores) otherwise.
  at::set_num_interop_threads(1);
  torch::set_num_threads(args.threads);
  openblas_set_num_threads(args.threads);
  torch::manual_seed(0);
  Result r{"libtorch", args.workload, args.threads, {}, {}};
  try {
    if (compare::run_common(args, r)) {
      // done
    } else if (args.workload == "info") {
      r.add("version", TORCH_VERSION);
      r.add("num_threads", at::get_num_threads());
      r.add("num_interop_threads", at::get_num_interop_threads());
      r.add("cpu_capability", config_line("CPU capability usage:"));
      r.add("blas_info", config_line("BLAS_INFO="));
      r.add("use_mkldnn", config_line("USE_MKLDNN="));
      r.add("mkldnn", config_line("Intel(R) MKL-DNN"));
      r.add("parallel_info", at::get_parallel_info());
    } else if (args.workload == "add_small") {
      add_small(args, r, false);
    } else if (args.workload == "add_small_grad") {
      add_small(args, r, true);
    } else if (args.workload == "add_large") {
      add_large(args, r);
    } else if (args.workload == "sgemm512") {
      sgemm(args, r, 512);
    } else if (args.workload == "sgemm1024") {
      sgemm(args, r, 1024);
    } else if (args.workload == "sgemm2048") {
      sgemm(args, r, 2048);
    } else if (args.workload == "mlp") {
      mlp(args, r);
    } else if (args.workload == "cnn") {
      cnn(args, r);
    } else if (args.workload == "transformer") {
      transformer(args, r);
    } else {
      compare::usage(argv[0]);
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torch_work %s: %s\n", args.workload.c_str(), e.what());
    return 1;
  }
  r.print();
  return 0;
}
