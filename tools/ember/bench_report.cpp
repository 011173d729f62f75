// `ember bench`'s table, JSON file and comparison.
#include "bench_report.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace ember::cli::bench {

namespace {

// ---- peaks ------------------------------------------------------------------------------------

struct Peak {
  const char* name;        // a substring of the device name
  double f32, tf32, bf16;  // TFLOP/s, dense
  double bandwidth;        // GB/s
};

// NVIDIA's datasheet figures (SXM boards unless named; tensor cores without sparsity).
constexpr Peak kGpuPeaks[] = {
    {"H200", 67, 494.7, 989.4, 4800}, {"H100 PCIe", 51, 378, 756, 2000},
    {"H100", 67, 494.7, 989.4, 3350}, {"A100", 19.5, 156, 312, 2039},
    {"L40S", 91.6, 183, 366, 864},    {"L4", 30.3, 60, 121, 300},
};

double cpu_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return std::atof(line.c_str() + colon + 1) / 1000.0;
    }
  }
  return 0;
}

std::string fmt(double v) {
  if (v < 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf,
                v >= 100  ? "%.0f"
                : v >= 10 ? "%.1f"
                : v >= 1  ? "%.2f"
                          : "%.3g",
                v);
  return buf;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

std::string num(double v) {
  if (v < 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

// The value of "key": in one line of flat JSON, as text (strings unquoted), or "" when absent.
std::string field(const std::string& line, const std::string& key) {
  const std::string k = "\"" + key + "\":";
  auto at = line.find(k);
  if (at == std::string::npos) return "";
  at += k.size();
  if (at < line.size() && line[at] == '"') {
    std::string out;
    for (size_t i = at + 1; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      out += line[i];
    }
    return out;
  }
  const auto end = line.find_first_of(",}", at);
  return line.substr(at, end - at);
}

double number(const std::string& line, const std::string& key) {
  const std::string v = field(line, key);
  return v.empty() || v == "null" ? -1 : std::atof(v.c_str());
}

// Speed-up of `fast` over `slow` in a unit: throughput divides, time ("us") inverts.
double speedup(const std::string& unit, double slow, double fast) {
  if (slow <= 0 || fast <= 0) return -1;
  return unit == "us" ? slow / fast : fast / slow;
}

}  // namespace

double peak_for(const Workload& w, const Machine& m, const std::string& device) {
  if (w.unit == "us") return -1;
  const bool tf32 = w.dtype == "f32" && w.opt("precision", "highest") != "highest";
  const bool half = w.dtype == "bf16" || w.dtype == "f16";
  if (device == "cpu") {
    if (w.unit != "TFLOP/s") return -1;
    const auto has = [&](const char* f) {
      return std::find(m.cpu_features.begin(), m.cpu_features.end(), f) != m.cpu_features.end();
    };
    // Two FMA units: 2 x 2 x (vector width in floats) flops per cycle per core.
    const double per_cycle = has("avx512f") ? 64 : (has("avx2") && has("fma")) ? 32 : 16;
    const double ghz = cpu_ghz();
    return ghz > 0 ? m.cpu_threads * ghz * per_cycle / 1e3 : -1;
  }
  if (w.op == "h2d" || w.op == "d2h") return -1;  // the PCIe link, not the device
  for (const GpuInfo& g : m.gpus) {
    if (g.device != device) continue;
    for (const Peak& p : kGpuPeaks) {
      if (g.name.find(p.name) == std::string::npos) continue;
      if (w.unit == "GB/s") return p.bandwidth;
      return half ? p.bf16 : tf32 ? p.tf32 : p.f32;
    }
  }
  return -1;
}

void print_table(std::ostream& os, const Run& run) {
  // Rows in order of first appearance; columns: cpu, then each GPU.
  std::vector<std::string> order, devices;
  std::map<std::pair<std::string, std::string>, const Result*> at;
  for (const Result& r : run.results) {
    if (std::find(order.begin(), order.end(), r.workload) == order.end())
      order.push_back(r.workload);
    if (std::find(devices.begin(), devices.end(), r.device) == devices.end())
      devices.push_back(r.device);
    at[{r.workload, r.device}] = &r;
  }
  const Machine& m = run.machine;
  os << "ember bench" << (run.quick ? " --quick" : "") << "   " << run.time << "   " << m.host
     << "\nCPU: " << m.cpu_model << ", " << m.cpu_threads << " threads\n";
  for (const GpuInfo& g : m.gpus)
    os << g.device << ": " << g.name << ", " << fmt(g.memory / 1073741824.0) << " GiB, sm_"
       << g.capability << ", driver " << m.driver_release << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "\n%-36s %-8s", "workload", "unit");
  os << line;
  for (const std::string& d : devices) {
    std::snprintf(line, sizeof line, " %10s", d.c_str());
    os << line;
    if (d != "cpu") {
      std::snprintf(line, sizeof line, " %9s %7s", "speed-up", "% peak");
      os << line;
    } else {
      std::snprintf(line, sizeof line, " %7s", "% peak");
      os << line;
    }
  }
  os << "\n";
  std::vector<std::string> notes;
  for (const std::string& wname : order) {
    const Result* cpu = at.count({wname, "cpu"}) ? at[{wname, "cpu"}] : nullptr;
    std::string unit;
    for (const std::string& d : devices)
      if (at.count({wname, d})) unit = at[{wname, d}]->unit;
    std::snprintf(line, sizeof line, "%-36s %-8s", wname.c_str(), unit.c_str());
    os << line;
    for (const std::string& d : devices) {
      const Result* r = at.count({wname, d}) ? at[{wname, d}] : nullptr;
      const double v = r ? r->value : -1;
      const double pct = r && r->peak > 0 && v > 0 ? 100.0 * v / r->peak : -1;
      const std::string pct_text = pct < 0 ? "-" : fmt(pct) + "%";
      std::snprintf(line, sizeof line, " %10s", fmt(v).c_str());
      os << line;
      if (d != "cpu") {
        const double s = speedup(unit, cpu ? cpu->value : -1, v);
        std::snprintf(line, sizeof line, " %9s %7s", s < 0 ? "-" : (fmt(s) + "x").c_str(),
                      pct_text.c_str());
      } else {
        std::snprintf(line, sizeof line, " %7s", pct_text.c_str());
      }
      os << line;
      if (r && !r->note.empty()) notes.push_back(wname + " on " + d + ": " + r->note);
    }
    os << "\n";
  }
  if (!notes.empty()) {
    os << "\n";
    for (const std::string& n : notes) os << "  " << n << "\n";
  }
  os << "\nspeed-up: each GPU against the CPU (for us, the CPU's time over the GPU's). % peak: of "
        "the datasheet figure\n(GPUs), of cores x clock x FMA width (CPU, an estimate).\n";
}

void write_json(std::ostream& os, const Run& run) {
  const Machine& m = run.machine;
  std::string features, gpus, gpu_names;
  for (const std::string& f : m.cpu_features) features += (features.empty() ? "" : ",") + quoted(f);
  for (const GpuInfo& g : m.gpus) {
    gpus += std::string(gpus.empty() ? "" : ",") + "{\"device\":" + quoted(g.device) +
            ",\"name\":" + quoted(g.name) + ",\"memory\":" + std::to_string(g.memory) +
            ",\"capability\":" + quoted(g.capability) + "}";
    gpu_names += (gpu_names.empty() ? "" : ", ") + g.name;
  }
  os << "{\n\"ember_bench\":1,\"time\":" << quoted(run.time)
     << ",\"quick\":" << (run.quick ? "true" : "false")
     << ",\n\"machine\":{\"host\":" << quoted(m.host)
     << ",\"ember_version\":" << quoted(m.ember_version)
     << ",\"build_info\":" << quoted(m.build_info) << ",\"cpu_model\":" << quoted(m.cpu_model)
     << ",\"cpu_threads\":" << m.cpu_threads << ",\"cpu_features\":[" << features
     << "],\"driver_release\":" << quoted(m.driver_release)
     << ",\"gpu_names\":" << quoted(gpu_names) << ",\"gpus\":[" << gpus << "]},\n\"results\":[\n";
  for (size_t i = 0; i < run.results.size(); ++i) {
    const Result& r = run.results[i];
    const double pct = r.peak > 0 && r.value > 0 ? r.value / r.peak : -1;
    os << "{\"workload\":" << quoted(r.workload) << ",\"device\":" << quoted(r.device)
       << ",\"unit\":" << quoted(r.unit) << ",\"value\":" << num(r.value) << ",\"ms\":" << num(r.ms)
       << ",\"peak\":" << num(r.peak) << ",\"peak_fraction\":" << num(pct)
       << ",\"note\":" << quoted(r.note) << "}" << (i + 1 < run.results.size() ? "," : "") << "\n";
  }
  os << "]}\n";
}

bool load_run(const std::string& path, Run& out, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read '" + path + "'";
    return false;
  }
  bool header = false;
  int no = 0;
  for (std::string line; std::getline(in, line);) {
    ++no;
    if (no == 1 && line != "{") break;
    if (no == 2 && line.rfind("\"ember_bench\":", 0) == 0) {
      header = true;
      out.time = field(line, "time");
      out.quick = field(line, "quick") == "true";
    } else if (line.rfind("\"machine\":", 0) == 0) {
      Machine& m = out.machine;
      m.host = field(line, "host");
      m.ember_version = field(line, "ember_version");
      m.cpu_model = field(line, "cpu_model");
      m.cpu_threads = static_cast<int>(number(line, "cpu_threads"));
      m.driver_release = field(line, "driver_release");
      const std::string names = field(line, "gpu_names");
      if (!names.empty()) m.gpus.push_back({"", names, 0, ""});
    } else if (line.rfind("{\"workload\":", 0) == 0) {
      Result r;
      r.workload = field(line, "workload");
      r.device = field(line, "device");
      r.unit = field(line, "unit");
      r.value = number(line, "value");
      r.ms = number(line, "ms");
      r.note = field(line, "note");
      out.results.push_back(r);
    }
  }
  if (!header) {
    error = "'" + path + "' is not a file saved by `ember bench`";
    return false;
  }
  return true;
}

void print_compare(std::ostream& os, const std::string& a_name, const Run& a,
                   const std::string& b_name, const Run& b) {
  auto describe = [&](const char* tag, const std::string& name, const Run& r) {
    os << tag << name << ": " << r.time << ", " << r.machine.host << ", " << r.machine.cpu_model
       << " (" << r.machine.cpu_threads << " threads)"
       << (r.machine.gpus.empty() ? "" : ", " + r.machine.gpus[0].name) << ", ember "
       << r.machine.ember_version << (r.quick ? ", --quick" : "") << "\n";
  };
  describe("A ", a_name, a);
  describe("B ", b_name, b);
  char line[512];
  std::snprintf(line, sizeof line, "\n%-36s %-8s %-8s %10s %10s %9s\n", "workload", "device",
                "unit", "A", "B", "B vs A");
  os << line;
  int missing = 0;
  for (const Result& rb : b.results) {
    const Result* ra = nullptr;
    for (const Result& r : a.results)
      if (r.workload == rb.workload && r.device == rb.device) ra = &r;
    if (ra == nullptr) {
      ++missing;
      continue;
    }
    const double s = speedup(rb.unit, ra->value, rb.value);
    std::snprintf(line, sizeof line, "%-36s %-8s %-8s %10s %10s %9s\n", rb.workload.c_str(),
                  rb.device.c_str(), rb.unit.c_str(), fmt(ra->value).c_str(), fmt(rb.value).c_str(),
                  s < 0 ? "-" : (fmt(s) + "x").c_str());
    os << line;
  }
  if (missing > 0) os << "\n" << missing << " result(s) of B have no counterpart in A\n";
  os << "\nB vs A: B's speed over A's (above 1: B is faster).\n";
}

}  // namespace ember::cli::bench
