// `ember demo`: what this build is and can reach, a few real ops printed on the best device, and
// the time of a large element-wise add.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "ember/ember.h"

namespace ember::cli {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown CPU";
}

// A device is usable when a tensor can be made on it; the error says why not.
bool probe_device(const Device& d, std::string& why) {
  try {
    Tensor t = zeros({1}, TensorOptions(d));
    return true;
  } catch (const Error& e) {
    why = e.what();
    return false;
  }
}

// "16777216" -> "16,777,216"
std::string grouped(int64_t n) {
  std::string s = std::to_string(n);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

void show(const std::string& code, const Tensor& t, const std::string& note = "") {
  std::cout << ">>> " << code;
  if (!note.empty())
    std::cout << std::string(code.size() < 40 ? 40 - code.size() : 1, ' ') << "// " << note;
  std::cout << "\n" << t << "\n\n";
}

void run_ops(const Device& device) {
  std::cout << "---- ops on " << device.str() << " ----\n\n";
  Tensor x = arange(6, TensorOptions(kFloat32).device(device)).view({2, 3});
  show("x = arange(6, float32).view({2, 3})", x);
  Tensor xt = x.t();
  show("x.t()", xt, "a view: no copy, strides (1, 3)");
  Tensor row = tensor({10.f, 20.f, 30.f}).to(device);
  show("x + tensor({10., 20., 30.})", x + row, "broadcast (3) -> (2, 3)");
  show("x.t() * x.t()", xt * xt, "element-wise on a non-contiguous view");
  show("x.exp()", x.exp());
  show("(x / 3).to(float16)", (x / 3).to(kFloat16));
  show("x > 2", x > 2);
  show("where(x > 2, x, -1.)", where(x > 2, x, -1.0));
  show("x.sqrt().narrow(1, 1, 2)", x.sqrt().narrow(1, 1, 2));
  show("x.matmul(x.t())", x.matmul(xt), "(2, 3) @ (3, 2) through BLAS");
  show("x.sum({1})", x.sum({1}), "reduce a dim");
  show("x.softmax(-1)", x.softmax(-1));
  manual_seed(0);
  show("randn({2, 3})  // manual_seed(0)", randn({2, 3}, TensorOptions().device(device)),
       "Philox: the same on every device");
}

// Best time of `repeat` runs, in seconds. Reading one element back makes asynchronous devices
// finish before the clock stops; on the CPU it costs nothing measurable.
double best_seconds(int64_t repeat, const std::function<Tensor()>& fn) {
  fn().narrow(0, 0, 1).item<float>();  // warm-up: first-touch page faults, thread start
  double best = 1e30;
  for (int64_t r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn().narrow(0, 0, 1).item<float>();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

int time_add(const Device& device, int64_t n, int64_t repeat) {
  std::cout << "---- timing: add of two float32 tensors of " << grouped(n) << " elements on "
            << device.str();
  if (device.is_cpu()) {
    const int t = get_num_threads();
    std::cout << " (" << t << (t == 1 ? " thread)" : " threads)");
  }
  std::cout << " ----\n\n";
  TensorOptions opts = TensorOptions(kFloat32).device(device);
  Tensor a = full({n}, 1.0, opts);
  Tensor b = full({n}, 2.0, opts);
  // 12 bytes per element: two 4-byte reads and one 4-byte write.
  const double bytes = 12.0 * static_cast<double>(n);
  double out_of_place = best_seconds(repeat, [&] { return a + b; });
  double in_place = best_seconds(repeat, [&] { return a.add_(b); });
  // a now holds 1 + 2 * (repeat + 1); check both ends so a wrong kernel cannot pass as fast.
  const float expect = 1.0f + 2.0f * static_cast<float>(repeat + 1);
  const float first = a.narrow(0, 0, 1).item<float>();
  const float last = a.narrow(0, n - 1, 1).item<float>();
  auto line = [&](const char* what, double s) {
    const bool small = s < 1e-3;
    std::printf("  %-12s %9.3f %s  %7.2f GB/s\n", what, small ? s * 1e6 : s * 1e3,
                small ? "us" : "ms", bytes / s / 1e9);
  };
  line("c = a + b", out_of_place);
  line("a.add_(b)", in_place);
  std::printf("  (best of %lld runs; GB/s counts bytes moved: 12 per element)\n",
              static_cast<long long>(repeat));
  if (first != expect || last != expect) {
    std::cerr << "ember demo: error: add_ gave " << first << " and " << last << ", expected "
              << expect << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

int run_demo(const Args& args) {
  const int64_t n = args.get_int("elements", int64_t{1} << 24);
  const int64_t repeat = args.get_int("repeat", 5);
  const int64_t threads = args.get_int("threads", get_num_threads());
  if (n < 1) throw UsageError{"--elements must be at least 1, got " + std::to_string(n)};
  if (repeat < 1) throw UsageError{"--repeat must be at least 1, got " + std::to_string(repeat)};
  if (threads < 1) throw UsageError{"--threads must be at least 1, got " + std::to_string(threads)};
  std::optional<Device> requested;
  if (auto d = args.get("device")) {
    try {
      requested = Device(*d);
    } catch (const Error& e) {
      throw UsageError{"--device: " + std::string(e.what())};
    }
    if (requested->is_cuda() && !requested->has_index()) requested = Device(kCUDA, 0);
  }
  set_num_threads(static_cast<int>(threads));

  std::cout << "ember " << kVersion << "  (" << build_info() << ")\n\n";
  std::cout << "cpu      " << cpu_model() << ", " << get_num_threads() << " threads\n";
  std::string why;
  const bool has_cuda = probe_device(Device(kCUDA, 0), why);
  if (has_cuda) {
    std::cout << "cuda:0   available\n";
  } else {
    std::cout << "cuda     unavailable in this build: " << why << "\n";
  }

  const Device device = requested ? *requested : has_cuda ? Device(kCUDA, 0) : Device(kCPU);
  if (requested && !probe_device(device, why)) {
    throw Error("[demo] device " + device.str() + " is not usable: " + why);
  }
  std::cout << "using    " << device.str() << "\n\n";

  run_ops(device);
  return time_add(device, n, repeat);
}

}  // namespace

Command demo_command() {
  Command c;
  c.name = "demo";
  c.summary = "show the build and devices, run a few ops, time a large add";
  c.description =
      "Prints the ember version and build options, the CPU and the devices this build can use,\n"
      "then runs element-wise ops, views and broadcasting on the best device (CUDA when\n"
      "available, else the CPU), prints the tensors, and times a float32 add out of place and\n"
      "in place.";
  c.flags = {
      {"device", "DEV", "run on this device: cpu, cuda or cuda:N", "the best available"},
      {"elements", "N", "elements per tensor in the timed add", "16777216"},
      {"repeat", "N", "timed runs per op; the best is reported", "5"},
      {"threads", "N", "CPU threads for the ops", "all cores"},
  };
  c.run = run_demo;
  return c;
}

}  // namespace ember::cli
