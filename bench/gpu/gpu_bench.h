// A small harness for the GPU benchmarks: plain executables (the GPU machines have no Google
// Benchmark) that time the workloads of their section of bench/gpu/workloads.txt, the list
// bench/gpu/torch_reference.py times too, with device synchronisation, one table row each.
//
//   bench_cuda_X [--list] [--smoke] [--quick] [--filter TEXT] [--table FILE]
//
//   --list    print the section's workloads and check that this program knows every op (no GPU
//             needed); exit 1 when one is unknown
//   --smoke   every workload once at a tiny size (shapes capped), to check the code paths (an
//             emulated device will do); the values mean nothing
//   --quick   fewer timed runs (3 runs of a quarter of the calls)
//   --filter  only the workloads whose name contains TEXT
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember/ember.h"

#ifndef EMBER_GPU_WORKLOADS
#define EMBER_GPU_WORKLOADS "bench/gpu/workloads.txt"
#endif

namespace ember::bench {

// Median wall time in milliseconds of fn over `reps` timed runs of `iters` calls each, after a
// warm-up; the device is synchronised around every timed run.
inline double median_ms(const std::function<void()>& fn, int iters = 20, int reps = 5) {
  for (int i = 0; i < 3; ++i) fn();
  cuda::synchronize();
  std::vector<double> runs;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) fn();
    cuda::synchronize();
    auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() / iters);
  }
  std::sort(runs.begin(), runs.end());
  return runs[runs.size() / 2];
}

inline void print_header(const std::string& title) {
  std::printf("\n%s\n%-44s %12s %10s %s\n", title.c_str(), "workload", "value", "unit", "note");
}

inline void print_row(const std::string& name, double value, const char* unit,
                      const std::string& note = "") {
  std::printf("%-44s %12.3f %10s %s\n", name.c_str(), value, unit, note.c_str());
  std::fflush(stdout);
}

// ---- the workload table ------------------------------------------------------------------------

// One row of bench/gpu/workloads.txt.
struct Workload {
  std::string name, op, unit;
  DType dtype = kFloat32;
  std::vector<int64_t> shape;
  double work = 0;  // bytes or flops per call per element of the shape (the K of "K n")
  std::map<std::string, std::string> options;
  int line = 0;

  bool has(const std::string& key) const { return options.count(key) != 0; }
  std::string opt(const std::string& key, const std::string& fallback = "") const {
    auto it = options.find(key);
    return it == options.end() ? fallback : it->second;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  // The shape as a tensor shape.
  Shape sizes() const { return Shape(shape); }
};

inline DType parse_dtype(const std::string& s) {
  static const std::map<std::string, DType> names = {
      {"f32", kFloat32}, {"f16", kFloat16}, {"bf16", kBFloat16}, {"f64", kFloat64},
      {"i64", kInt64},   {"i32", kInt32},   {"u8", kUInt8}};
  auto it = names.find(s);
  if (it == names.end()) throw std::runtime_error("unknown dtype '" + s + "'");
  return it->second;
}

inline std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

// The rows of one [section] of the table; throws naming the file and line on a malformed row.
inline std::vector<Workload> load_workloads(const std::string& path, const std::string& section) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the workload table " + path);
  std::vector<Workload> rows;
  std::set<std::string> names;
  std::string line, current;
  bool found = false;
  for (int no = 1; std::getline(in, line); ++no) {
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(no) + ": ";
    if (text.front() == '[') {
      if (text.back() != ']') throw std::runtime_error(where + "bad section header");
      current = text.substr(1, text.size() - 2);
      found |= current == section;
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(text);
    for (std::string c; std::getline(ss, c, '|');) cols.push_back(trim(c));
    if (text.back() == '|') cols.push_back("");
    if (cols.size() != 7) {
      throw std::runtime_error(where + "expected 7 columns separated by '|', got " +
                               std::to_string(cols.size()));
    }
    if (cols[0].empty() || cols[0].size() > 43) {
      throw std::runtime_error(where + "a name must have 1 to 43 characters");
    }
    if (!names.insert(cols[0]).second) throw std::runtime_error(where + "duplicate " + cols[0]);
    if (current != section) continue;
    Workload w;
    w.name = cols[0];
    w.op = cols[1];
    w.line = no;
    try {
      w.dtype = parse_dtype(cols[2]);
      std::stringstream dims(cols[3]);
      for (std::string d; std::getline(dims, d, 'x');) w.shape.push_back(std::stoll(d));
      w.unit = cols[4];
      if (w.unit != "GB/s" && w.unit != "TFLOP/s" && w.unit != "us") {
        throw std::runtime_error("unit must be GB/s, TFLOP/s or us");
      }
      if (w.unit == "us") {
        if (cols[5] != "-") throw std::runtime_error("a time (us) has no work column: use -");
      } else {
        if (cols[5].size() < 2 || cols[5].back() != 'n') {
          throw std::runtime_error("work must be 'K n' (e.g. 12n), got '" + cols[5] + "'");
        }
        w.work = std::stod(cols[5].substr(0, cols[5].size() - 1));
      }
      std::stringstream opts(cols[6]);
      for (std::string o; opts >> o;) {
        const auto eq = o.find('=');
        w.options[o.substr(0, eq)] = eq == std::string::npos ? "" : o.substr(eq + 1);
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(where + e.what());
    }
    rows.push_back(std::move(w));
  }
  if (!found) throw std::runtime_error(path + " has no [" + section + "] section");
  return rows;
}

// "dims=0,1" / "dim=1" as a list of dims.
inline std::vector<int64_t> dims_of(const Workload& w) {
  std::vector<int64_t> dims;
  std::stringstream ss(w.has("dims") ? w.opt("dims") : w.opt("dim"));
  for (std::string d; std::getline(ss, d, ',');) dims.push_back(std::stoll(d));
  return dims;
}

inline int64_t dim_of(const Workload& w) {
  if (!w.has("dim")) throw std::runtime_error(w.name + ": needs dim=D");
  return std::stoll(w.opt("dim"));
}

// A standard-normal device tensor of the workload's shape and dtype; with `t` in the options
// (and transposed = true) the transpose of a contiguous tensor, so the same logical shape with
// swapped strides.
inline Tensor input(const Workload& w, const Shape& shape, bool transposed = false) {
  const TensorOptions o = TensorOptions().dtype(w.dtype).device(Device(kCUDA, 0));
  if (transposed && w.has("t") && shape.size() == 2) {
    return randn({shape[1], shape[0]}, o).t();
  }
  return randn(shape, o);
}

// What a program registers per op: builds the inputs of a workload and returns the call to time.
using Setup = std::function<std::function<void()>(const Workload&)>;

// "copy": a device-to-device copy into an existing tensor (the bandwidth roof of the other rows).
inline std::function<void()> copy_op(const Workload& w) {
  Tensor a = input(w, w.sizes()), out = empty_like(a);
  return [a, out]() mutable { out.copy_(a); };
}

// Runs the program's section of the table (see the top of this file for the options).
inline int run(const char* program, const std::map<std::string, Setup>& ops, int argc,
               char** argv) {
  bool list = false, smoke = false, quick = false;
  std::string filter, table = EMBER_GPU_WORKLOADS;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--list") {
      list = true;
    } else if (a == "--smoke") {
      smoke = true;
    } else if (a == "--quick") {
      quick = true;
    } else if ((a == "--filter" || a == "--table") && i + 1 < argc) {
      (a == "--filter" ? filter : table) = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: %s [--list] [--smoke] [--quick] [--filter TEXT] [--table FILE]\n",
                   program);
      return 2;
    }
  }
  std::vector<Workload> rows;
  try {
    rows = load_workloads(table, program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
  int unknown = 0;
  for (const Workload& w : rows) {
    if (ops.count(w.op) == 0) {
      std::fprintf(stderr, "%s: %s:%d: '%s' has op '%s', which this program does not know\n",
                   program, table.c_str(), w.line, w.name.c_str(), w.op.c_str());
      ++unknown;
    }
  }
  if (list) {
    for (const Workload& w : rows) std::printf("%s\n", w.name.c_str());
    return unknown ? 1 : 0;
  }
  if (unknown) return 1;
  if (!cuda::is_available()) {
    std::printf("%s: no CUDA device is available; nothing measured (%zu workloads)\n", program,
                rows.size());
    return 0;
  }
  print_header(std::string(program) + " on " + cuda::get_device_name(0) +
               (smoke ? " (smoke run: tiny sizes, values mean nothing)" : ""));
  int failed = 0;
  for (Workload w : rows) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    int iters = w.has("iters") ? std::stoi(w.opt("iters")) : 20, reps = 5;
    if (smoke) {
      // Each dimension capped so that the whole stays small (and matmuls stay matmuls).
      const int64_t cap = w.shape.size() == 1 ? 4096 : w.shape.size() == 2 ? 64 : 16;
      for (int64_t& d : w.shape) d = std::min(d, cap);
      iters = 1;
      reps = 1;
    } else if (quick) {
      iters = std::max(1, iters / 4);
      reps = 3;
    }
    try {
      double ms = 0;
      {
        std::function<void()> fn = ops.at(w.op)(w);
        ms = median_ms(fn, iters, reps);
      }  // the inputs are freed before the next workload
      const double work = w.work * static_cast<double>(w.numel());
      char note[64];
      std::snprintf(note, sizeof note, "%.4g ms", ms);
      if (w.unit == "us") {
        print_row(w.name, ms * 1e3, "us");
      } else {
        const double per_s = work / (ms * 1e-3);
        print_row(w.name, w.unit == "GB/s" ? per_s / 1e9 : per_s / 1e12, w.unit.c_str(), note);
      }
    } catch (const std::exception& e) {
      std::printf("%-44s %12s %10s failed: %s\n", w.name.c_str(), "-", w.unit.c_str(), e.what());
      ++failed;
    }
  }
  return failed ? 1 : 0;
}

}  // namespace ember::bench
