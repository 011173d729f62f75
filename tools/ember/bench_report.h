// `ember bench`'s results: the machine they were measured on, the table, the JSON file they are
// saved to, and the comparison of two saved runs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "bench_table.h"

namespace ember::cli::bench {

struct GpuInfo {
  std::string device, name;
  size_t memory = 0;
  std::string capability;
};

struct Machine {
  std::string host, ember_version, build_info, cpu_model, driver_release;
  int cpu_threads = 0;
  std::vector<std::string> cpu_features;
  std::vector<GpuInfo> gpus;
};

struct Result {
  std::string workload, device, unit;  // device "cpu" or "cuda:N"
  double value = -1;                   // in unit; -1 when not measured (note says why)
  double ms = -1;                      // per call
  double peak = -1;                    // the device's peak in unit; -1 when unknown
  std::string note;
};

struct Run {
  std::string time;
  bool quick = false;
  Machine machine;
  std::vector<Result> results;
};

// The peak of `device` ("cpu", "cuda:N") for workload w, in w's unit, or -1 when unknown: the
// datasheet's dense tensor-core and FMA figures for the GPUs it knows, the cores x clock x FMA
// width for the CPU (an estimate); memory bandwidth for GB/s rows (GPUs only).
double peak_for(const Workload& w, const Machine& m, const std::string& device);

// The results as a table: per workload the CPU's value, each GPU's, its speed-up over the CPU and
// its fraction of peak.
void print_table(std::ostream& os, const Run& run);

// One JSON object; each result is one line (load_run reads them back).
void write_json(std::ostream& os, const Run& run);
bool load_run(const std::string& path, Run& out, std::string& error);

// B against A, row by row (the same workload on the same device): the values and B's speed-up.
void print_compare(std::ostream& os, const std::string& a_name, const Run& a,
                   const std::string& b_name, const Run& b);

}  // namespace ember::cli::bench
