// Parsing the workload table (bench/gpu/workloads.txt) for `ember bench`.
#include "bench_table.h"

#include <set>
#include <sstream>
#include <stdexcept>

namespace ember::cli::bench {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

}  // namespace

std::string Workload::opt(const std::string& key, const std::string& fallback) const {
  auto it = options.find(key);
  return it == options.end() ? fallback : it->second;
}

double Workload::numel() const {
  double n = 1;
  for (long long d : shape) n *= static_cast<double>(d);
  return n;
}

std::vector<Workload> parse_table(const std::string& text, const std::string& origin) {
  std::vector<Workload> rows;
  std::set<std::string> names;
  std::istringstream in(text);
  std::string section;
  int no = 0;
  for (std::string line; std::getline(in, line);) {
    ++no;
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    const std::string where = origin + ":" + std::to_string(no) + ": ";
    if (t.front() == '[') {
      if (t.back() != ']') throw std::runtime_error(where + "bad section header");
      section = t.substr(1, t.size() - 2);
      continue;
    }
    std::vector<std::string> cols;
    std::stringstream ss(t);
    for (std::string c; std::getline(ss, c, '|');) cols.push_back(trim(c));
    if (t.back() == '|') cols.push_back("");
    if (cols.size() != 7) throw std::runtime_error(where + "expected 7 columns separated by '|'");
    if (section.empty()) throw std::runtime_error(where + "a row before the first [section]");
    if (!names.insert(cols[0]).second) throw std::runtime_error(where + "duplicate " + cols[0]);
    Workload w;
    w.section = section;
    w.name = cols[0];
    w.op = cols[1];
    w.dtype = cols[2];
    w.unit = cols[4];
    try {
      std::stringstream dims(cols[3]);
      for (std::string d; std::getline(dims, d, 'x');) w.shape.push_back(std::stoll(d));
      if (w.unit != "GB/s" && w.unit != "TFLOP/s" && w.unit != "us")
        throw std::runtime_error("unit must be GB/s, TFLOP/s or us");
      if (w.unit != "us") {
        if (cols[5].size() < 2 || cols[5].back() != 'n')
          throw std::runtime_error("work must be 'K n', got '" + cols[5] + "'");
        w.work = std::stod(cols[5].substr(0, cols[5].size() - 1));
      }
    } catch (const std::exception& e) {
      throw std::runtime_error(where + e.what());
    }
    std::stringstream opts(cols[6]);
    for (std::string o; opts >> o;) {
      const auto eq = o.find('=');
      w.options[o.substr(0, eq)] = eq == std::string::npos ? "" : o.substr(eq + 1);
    }
    rows.push_back(std::move(w));
  }
  return rows;
}

}  // namespace ember::cli::bench
