// The comparison workloads written against ember's public API (torch_work.cpp is the same
// against libtorch): ember_work WORKLOAD THREADS [options]; one JSON line per run.
#include "common.h"
#include <ember/ember.h>

using namespace ember;
namespace F = ember::nn::functional;

namespace {

using compare::Args;
using compare::Result;
using compare::time_reps;
using compare::Timing;

// Per-op overhead: one batch of kOps adds of 8-element tensors is one repetition.
constexpr int kOps = 20000;

void add_small(const Args& args, Result& r, bool grad) {
  Tensor a = randn({8}, TensorOptions().requires_grad(grad));
  Tensor b = randn({8});
  const Timing t = time_reps(args, [&] {
    for (int i = 0; i < kOps; ++i) {
      Tensor c = a + b;
    }
  });
  r.add("ns_per_op", t.median_s / kOps * 1e9);
  r.add("cpu_ns_per_op", t.cpu_median_s / kOps * 1e9);
  r.add_timing(t);
}

// ember has no out= variant of add: c = a + b reuses the freed 64 MiB block through the caching
// host allocator, so after the warm-up no page is touched for the first time.
void add_large(const Args& args, Result& r) {
  constexpr int64_t n = int64_t{16} << 20;
  Tensor a = randn({n});
  Tensor b = randn({n});
  Tensor c = empty({n});
  const Timing t = time_reps(args, [&] { c = a + b; });
  r.add("gbps", 3.0 * 4 * n / t.median_s * 1e-9);
  r.add("ms", t.median_s * 1e3);
  r.add_timing(t);
  r.add("note", "c = a + b (no out= variant; the caching allocator reuses the output block)");
}

void sgemm(const Args& args, Result& r, int64_t n) {
  Tensor a = randn({n, n});
  Tensor b = randn({n, n});
  const Timing t = time_reps(args, [&] { Tensor c = mm(a, b); });
  r.add("gflops", 2.0 * n * n * n / t.median_s * 1e-9);
  r.add("ms", t.median_s * 1e3);
  r.add("cpu_ms", t.cpu_median_s * 1e3);
  r.add_timing(t);
}

// One training step: zero_grad, forward, loss, backward, SGD step.
template <class Model>
Timing train(const Args& args, Model& model, const Tensor& x, const Tensor& y, bool mse) {
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  return time_reps(args, [&] {
    opt.zero_grad();
    Tensor out = model->forward(x);
    Tensor loss = mse ? F::mse_loss(out, y) : F::cross_entropy(out, y);
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
  nn::Sequential model(nn::Linear(784, 512), nn::ReLU(), nn::Linear(512, 512), nn::ReLU(),
                       nn::Linear(512, 10));
  const Tensor x = randn({batch, 784});
  const Tensor y = randint(0, 10, {batch});
  const Timing t = train(args, model, x, y, false);
  report_step(r, t, batch);
  const double flops = compare::mlp_step_flops(batch, {{784, 512}, {512, 512}, {512, 10}});
  r.add("gflops", flops / t.median_s * 1e-9);
}

void cnn(const Args& args, Result& r) {
  constexpr int64_t batch = 64;
  nn::Sequential model(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)), nn::ReLU(),
                       nn::MaxPool2d(nn::MaxPool2dOptions(2)),
                       nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::ReLU(),
                       nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(), nn::Linear(3136, 128),
                       nn::ReLU(), nn::Linear(128, 10));
  const Tensor x = randn({batch, 1, 28, 28});
  const Tensor y = randint(0, 10, {batch});
  report_step(r, train(args, model, x, y, false), batch);
}

void transformer(const Args& args, Result& r) {
  constexpr int64_t seq = 128, batch = 16, d_model = 256;
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(d_model, 4));
  const Tensor x = randn({seq, batch, d_model});  // (S, N, E)
  const Tensor target = randn({seq, batch, d_model});
  const Timing t = train(args, layer, x, target, true);
  report_step(r, t, batch);
  r.add("tokens_per_s", static_cast<double>(seq * batch) / t.median_s);
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = compare::parse_args(argc, argv);
  set_num_threads(args.threads);
  manual_seed(0);
  Result r{"ember", args.workload, args.threads, {}, {}};
  try {
    if (compare::run_common(args, r)) {
      // done
    } else if (args.workload == "info") {
      r.add("version", EMBER_VERSION_STRING);
      r.add("num_threads", get_num_threads());
      r.add("onednn", backends::mkldnn::is_available() && backends::mkldnn::enabled()
                          ? backends::mkldnn::describe()
                          : "off: " + backends::mkldnn::describe());
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
    std::fprintf(stderr, "ember_work %s: %s\n", args.workload.c_str(), e.what());
    return 1;
  }
  r.print();
  return 0;
}
