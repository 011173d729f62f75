// The workload table of `ember bench`: bench/gpu/workloads.txt, the file the GPU benchmark
// programs read too, compiled into the command (so an installed `ember` has it) or read from a
// file given with --table.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace ember::cli::bench {

// One row of the table; the columns are described at the top of workloads.txt.
struct Workload {
  std::string section, name, op, dtype, unit;
  std::vector<long long> shape;
  double work = 0;  // bytes or flops per call per element of the shape; 0 for unit "us"
  std::map<std::string, std::string> options;

  bool has(const std::string& key) const { return options.count(key) != 0; }
  std::string opt(const std::string& key, const std::string& fallback = "") const;
  double numel() const;
};

// The table compiled into this program.
const char* builtin_table();

// Every row of `text`, in order; throws std::runtime_error naming `origin` and the line of a
// malformed row or a duplicate name.
std::vector<Workload> parse_table(const std::string& text, const std::string& origin);

}  // namespace ember::cli::bench
