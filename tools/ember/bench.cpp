// `ember bench`: the CPU-vs-GPU table. Every workload of bench/gpu/workloads.txt whose op this
// command knows runs on the CPU and on each GPU; the table shows the throughput, the speed-up
// over the CPU and the fraction of the device's peak, and the results are saved as JSON with a
// description of the machine so that two runs can be compared (--compare A.json B.json).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>

#include "bench_report.h"
#include "bench_table.h"
#include "cli.h"
#include "doctor_report.h"
#include "ember/ember.h"

namespace ember::cli {

namespace {

using bench::Result;
using bench::Workload;
using Fn = std::function<void()>;
namespace F = nn::functional;

// ---- the ops ----------------------------------------------------------------------------------

DType dtype_of(const std::string& s) {
  static const std::map<std::string, DType> names = {
      {"f32", kFloat32}, {"f16", kFloat16}, {"bf16", kBFloat16}, {"f64", kFloat64},
      {"i64", kInt64},   {"i32", kInt32},   {"u8", kUInt8}};
  auto it = names.find(s);
  if (it == names.end()) throw Error("[bench] unknown dtype '" + s + "'");
  return it->second;
}

Shape shape_of(const Workload& w) {
  std::vector<int64_t> s(w.shape.begin(), w.shape.end());
  return Shape(s);
}

Tensor input(const Workload& w, const Shape& shape, const Device& dev) {
  const TensorOptions o = TensorOptions().dtype(dtype_of(w.dtype)).device(dev);
  if (w.has("t") && shape.size() == 2) return randn({shape[1], shape[0]}, o).t();
  return randn(shape, o);
}

int64_t dim_option(const Workload& w) { return std::stoll(w.opt("dim", "-1")); }

std::vector<int64_t> dims_option(const Workload& w) {
  std::vector<int64_t> dims;
  std::stringstream ss(w.has("dims") ? w.opt("dims") : w.opt("dim"));
  for (std::string d; std::getline(ss, d, ',');) dims.push_back(std::stoll(d));
  return dims;
}

// The training steps: the models of `ember train` (the zoo's Fashion-MNIST classifiers) on
// random images.
Fn train_step(const Workload& w, const Device& dev) {
  auto model = std::make_shared<nn::Sequential>(std::dynamic_pointer_cast<nn::SequentialImpl>(
      models::make(w.op == "train_mlp" ? "fashion-mlp" : "fashion-cnn")));
  (*model)->to(dev);
  auto opt =
      std::make_shared<optim::SGD>((*model)->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  const int64_t batch = w.shape.at(0);
  Tensor x = randn({batch, 1, 28, 28}, TensorOptions().device(dev));
  Tensor y = randint(0, 10, {batch}, TensorOptions(kInt64).device(dev));
  return [model, opt, x, y] {
    Tensor loss = F::cross_entropy((*model)->forward(x), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
  };
}

// The call to time for workload w on dev, or nullptr when the op does not apply there.
Fn setup(const Workload& w, const Device& dev) {
  const std::string& op = w.op;
  const auto& s = w.shape;
  if (op == "matmul" || op == "bmm") {
    const bool batched = op == "bmm";
    if (s.size() != (batched ? 4u : 3u)) throw Error("[bench] " + w.name + ": bad shape");
    Tensor a = batched ? input(w, {s[0], s[1], s[2]}, dev) : input(w, {s[0], s[1]}, dev);
    Tensor b = batched ? input(w, {s[0], s[2], s[3]}, dev) : input(w, {s[1], s[2]}, dev);
    const std::string precision = w.opt("precision", "highest");
    return [a, b, precision] {
      set_float32_matmul_precision(precision);
      (void)matmul(a, b);
    };
  }
  if (op == "conv2d") {
    if (s.size() != 5) throw Error("[bench] " + w.name + ": conv2d needs BxCinxHxWxCout");
    Tensor x = input(w, {s[0], s[1], s[2], s[3]}, dev).requires_grad_();
    Tensor weight = input(w, {s[4], s[1], 3, 3}, dev).requires_grad_();
    return [x, weight] {
      Tensor y = F::conv2d(x, weight, {}, 1, 1);
      y.sum().backward();
    };
  }
  if (op == "train_mlp" || op == "train_cnn") return train_step(w, dev);
  if (op == "h2d" || op == "d2h") {
    if (!dev.is_cuda()) return nullptr;  // a copy between host and device needs a device
    const bool pinned = w.opt("host", "pageable") == "pinned";
    const TensorOptions host = TensorOptions(dtype_of(w.dtype)).pinned_memory(pinned);
    Tensor h = empty(shape_of(w), host);
    Tensor d = empty(shape_of(w), TensorOptions(dtype_of(w.dtype)).device(dev));
    if (op == "h2d") return [h, d, pinned]() mutable { d.copy_(h, pinned); };
    return [h, d, pinned]() mutable { h.copy_(d, pinned); };
  }
  Tensor a = input(w, shape_of(w), dev);
  if (op == "copy") {
    Tensor out = empty_like(a);
    return [a, out]() mutable { out.copy_(a); };
  }
  if (op == "add" || op == "mul") {
    Tensor b = input(w, shape_of(w), dev);
    if (op == "add") return [a, b] { (void)(a + b); };
    return [a, b] { (void)(a * b); };
  }
  if (op == "relu") return [a] { (void)relu(a); };
  if (op == "exp") return [a] { (void)exp(a); };
  if (op == "gelu") return [a] { (void)gelu(a); };
  if (op == "cast") {
    const DType to = dtype_of(w.opt("to", "f32"));
    return [a, to] { (void)a.to(to); };
  }
  if (op == "sum") return [a, d = dims_option(w)] { (void)sum(a, d); };
  if (op == "mean") return [a, d = dims_option(w)] { (void)mean(a, d); };
  if (op == "amax") return [a, d = dims_option(w)] { (void)amax(a, d); };
  if (op == "var") return [a, d = dims_option(w)] { (void)var(a, d); };
  if (op == "softmax") return [a, d = dim_option(w)] { (void)softmax(a, d); };
  if (op == "log_softmax") return [a, d = dim_option(w)] { (void)log_softmax(a, d); };
  return nullptr;
}

bool known_op(const std::string& op) {
  static const std::set<std::string> ops = {"matmul", "bmm",  "conv2d", "train_mlp", "train_cnn",
                                            "h2d",    "d2h",  "copy",   "add",       "mul",
                                            "relu",   "exp",  "gelu",   "cast",      "sum",
                                            "mean",   "amax", "var",    "softmax",   "log_softmax"};
  return ops.count(op) != 0;
}

// ---- timing -----------------------------------------------------------------------------------

void sync(const Device& dev) {
  if (dev.is_cuda()) cuda::synchronize(dev.index());
}

// Milliseconds per call: the median of `reps` runs of enough calls to fill `target_s` each.
double time_ms(const Fn& fn, const Device& dev, double target_s, int reps) {
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  fn();  // warm-up (and a first estimate)
  sync(dev);
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int iters = static_cast<int>(std::clamp(target_s / std::max(first, 1e-7), 1.0, 1000.0));
  std::vector<double> runs;
  for (int r = 0; r < reps; ++r) {
    t0 = Clock::now();
    for (int i = 0; i < iters; ++i) fn();
    sync(dev);
    runs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / iters);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

// A CPU workload skipped because it would take minutes: 16-bit products of more than 20 GFLOP
// (the CPU has no fast 16-bit GEMM).
bool too_slow_for_cpu(const Workload& w) {
  return w.unit == "TFLOP/s" && (w.dtype == "bf16" || w.dtype == "f16") &&
         w.work * w.numel() > 20e9;
}

// ---- the command ------------------------------------------------------------------------------

std::string timestamp(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

bench::Machine describe_machine() {
  bench::Machine m;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  m.host = host;
  m.ember_version = kVersion;
  m.build_info = build_info();
  const doctor::Cpu cpu = doctor::cpu_info();
  m.cpu_model = cpu.model;
  m.cpu_threads = cpu.ember_threads;
  m.cpu_features = cpu.features;
  m.driver_release = cuda::driver_release();
  for (int d = 0; d < cuda::device_count(); ++d) {
    const cuda::DeviceProperties p = cuda::get_device_properties(d);
    m.gpus.push_back({"cuda:" + std::to_string(d), p.name, p.total_memory,
                      std::to_string(p.major) + "." + std::to_string(p.minor)});
  }
  return m;
}

int run_compare(const std::string& value) {
  const auto nl = value.find('\n');
  const std::string a = value.substr(0, nl), b = value.substr(nl + 1);
  bench::Run ra, rb;
  std::string error;
  if (!bench::load_run(a, ra, error) || !bench::load_run(b, rb, error)) {
    std::cerr << "ember bench: --compare: " << error << "\n";
    return kExitFailure;
  }
  bench::print_compare(std::cout, a, ra, b, rb);
  return kExitOk;
}

int run_bench(const Args& args) {
  if (auto c = args.get("compare")) return run_compare(*c);
  const bool quick = args.has("quick"), json = args.has("json");
  std::string table_text = bench::builtin_table(), origin = "workloads.txt (built in)";
  if (auto t = args.get("table")) {
    std::ifstream in(*t);
    if (!in) throw UsageError{"--table: cannot read '" + *t + "'"};
    std::stringstream ss;
    ss << in.rdbuf();
    table_text = ss.str();
    origin = *t;
  }
  std::vector<Workload> rows;
  try {
    rows = bench::parse_table(table_text, origin);
  } catch (const std::exception& e) {
    std::cerr << "ember bench: " << e.what() << "\n";
    return kExitFailure;
  }
  const std::string filter = args.get("filter").value_or("");
  std::vector<Workload> selected;
  for (const Workload& w : rows) {
    if (!known_op(w.op)) continue;  // rows only the GPU programs time (alloc, cumsum, ...)
    if (quick && !w.has("quick")) continue;
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    selected.push_back(w);
  }
  if (args.has("list")) {
    for (const Workload& w : selected) std::cout << w.section << " | " << w.name << "\n";
    return kExitOk;
  }
  if (selected.empty()) throw UsageError{"no workload matches --filter '" + filter + "'"};

  std::vector<Device> devices;
  const std::string which = args.get("device").value_or("all");
  if (which == "all" || which == "cpu") devices.push_back(Device(kCPU));
  if (which != "cpu") {
    for (int d = 0; d < cuda::device_count(); ++d) {
      if (which == "all" || which == "cuda" || which == "cuda:" + std::to_string(d))
        devices.push_back(Device(kCUDA, d));
    }
    if (devices.empty() || (which != "all" && devices.size() == 0)) {
      throw UsageError{"--device " + which + ": no such device (use all, cpu, cuda or cuda:N; " +
                       std::to_string(cuda::device_count()) + " CUDA device(s) here)"};
    }
  }

  // Open the output first: a run must not end in an unwritable path.
  const std::string save =
      args.get("save").value_or("ember-bench-" + timestamp("%Y%m%d-%H%M%S") + ".json");
  std::ofstream out_file;
  if (save != "none") {
    out_file.open(save, std::ios::trunc);
    if (!out_file) {
      std::cerr << "ember bench: cannot write the results to '" << save
                << "' (choose another with --save PATH, or --save none)\n";
      return kExitFailure;
    }
  }

  bench::Run run;
  run.time = timestamp("%Y-%m-%dT%H:%M:%S");
  run.quick = quick;
  run.machine = describe_machine();
  const double target_s = quick ? 0.05 : 0.3;
  const int reps = quick ? 1 : 3;
  const bool tty = isatty(STDERR_FILENO) != 0;
  const size_t total = selected.size() * devices.size();
  size_t step = 0;
  for (const Workload& w : selected) {
    for (const Device& dev : devices) {
      ++step;
      const std::string where = dev.is_cuda() ? "cuda:" + std::to_string(dev.index()) : "cpu";
      std::cerr << (tty ? "\r\033[K" : "") << "ember bench: [" << step << "/" << total << "] "
                << w.name << " on " << where << (tty ? "" : "\n") << std::flush;
      Result r;
      r.workload = w.name;
      r.device = where;
      r.unit = w.unit;
      r.peak = bench::peak_for(w, run.machine, where);
      try {
        if (dev.is_cpu() && too_slow_for_cpu(w)) {
          r.note = "skipped on the CPU (too slow)";
        } else if (Fn fn = setup(w, dev)) {
          r.ms = time_ms(fn, dev, target_s, reps);
          const double per_s = w.work * w.numel() / (r.ms * 1e-3);
          r.value = w.unit == "us" ? r.ms * 1e3 : w.unit == "GB/s" ? per_s / 1e9 : per_s / 1e12;
        } else {
          r.note = "not applicable";
        }
      } catch (const std::exception& e) {
        r.note = std::string("failed: ") + e.what();
      }
      set_float32_matmul_precision("highest");
      run.results.push_back(r);
    }
  }
  if (tty) std::cerr << "\r\033[K" << std::flush;
  if (json) {
    bench::write_json(std::cout, run);
  } else {
    bench::print_table(std::cout, run);
  }
  if (out_file.is_open()) {
    bench::write_json(out_file, run);
    out_file.close();
    if (!out_file) {
      std::cerr << "ember bench: writing '" << save << "' failed\n";
      return kExitFailure;
    }
    if (!json) std::cout << "\nresults saved to " << save << "\n";
  }
  return kExitOk;
}

}  // namespace

Command bench_command() {
  Command c;
  c.name = "bench";
  c.summary = "the CPU-vs-GPU speed-up table: matmul, conv2d, element-wise, copies, training";
  c.description =
      "Times every workload of the benchmark table (bench/gpu/workloads.txt, built in) whose op\n"
      "it knows on the CPU and on each GPU: matrix products (float32, TF32, bfloat16), conv2d\n"
      "forward+backward, element-wise ops and reductions at memory-bound sizes, host<->device\n"
      "copies (pageable and pinned) and training steps of the MLP and the CNN. Prints TFLOP/s,\n"
      "GB/s or microseconds, the speed-up of each GPU over the CPU and the fraction of the\n"
      "device's peak, and saves the results with a description of the machine as JSON.\n"
      "--quick times a small set at small sizes (seconds on a CPU).\n"
      "\n"
      "Exit codes: 0 done, 1 a result file could not be written or read, 2 usage error.";
  c.flags = {
      {"quick", "", "the small set (the rows marked quick), one short run each", ""},
      {"device", "DEV", "all, cpu, cuda (every GPU) or cuda:N", "all"},
      {"filter", "TEXT", "only the workloads whose name contains TEXT", ""},
      {"json", "", "print the results as JSON instead of the table", ""},
      {"save", "PATH", "where the JSON results go ('none': nowhere)",
       "ember-bench-<date>-<time>.json"},
      {"compare", "A.json B.json", "compare two saved runs (B against A) and exit", "", 2},
      {"table", "FILE", "read the workloads from FILE instead of the built-in table", ""},
      {"list", "", "list the workloads that would run and exit", ""},
  };
  c.run = run_bench;
  return c;
}

}  // namespace ember::cli
