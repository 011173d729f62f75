// `ember smi`: a GPU monitor in the manner of nvidia-smi (NVML, opened at run time), plus the
// caching allocator's view of each ember process that publishes a monitor status file.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli.h"
#include "ember/cuda.h"
#include "monitor_status.h"

namespace ember::cli {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

enum class Format { kText, kJson, kCsv };

// Which GPUs to show: all, or one named by --device.
struct DeviceFilter {
  enum Kind { kAll, kCuda, kIndex, kUuid } kind = kAll;
  int number = -1;
  std::string uuid;
  std::string spec;
};

DeviceFilter parse_device(const std::optional<std::string>& spec) {
  DeviceFilter f;
  if (!spec) return f;
  f.spec = *spec;
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() < 6 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (spec->rfind("cuda:", 0) == 0 && digits(spec->substr(5))) {
    f.kind = DeviceFilter::kCuda;
    f.number = std::atoi(spec->c_str() + 5);
  } else if (digits(*spec)) {
    f.kind = DeviceFilter::kIndex;
    f.number = std::atoi(spec->c_str());
  } else if (spec->rfind("GPU-", 0) == 0 && spec->size() > 4) {
    f.kind = DeviceFilter::kUuid;
    f.uuid = *spec;
  } else {
    throw UsageError{"--device: unknown device '" + *spec +
                     "' (use cuda:N, an nvidia-smi index N, or a UUID GPU-...)"};
  }
  return f;
}

bool selected(const DeviceFilter& f, const cuda::GpuStatus& g) {
  switch (f.kind) {
    case DeviceFilter::kAll:
      return true;
    case DeviceFilter::kCuda:
      return g.cuda_device == f.number;
    case DeviceFilter::kIndex:
      return g.index == f.number;
    case DeviceFilter::kUuid:
      return g.uuid.rfind(f.uuid, 0) == 0;
  }
  return false;
}

// What a --device that matches nothing can be instead.
std::string device_choices(const cuda::GpuSnapshot& snap) {
  std::string cuda_list, index_list;
  for (const auto& g : snap.gpus) {
    index_list += (index_list.empty() ? "" : ", ") + std::to_string(g.index);
    if (g.cuda_device >= 0)
      cuda_list += (cuda_list.empty() ? "" : ", ") + ("cuda:" + std::to_string(g.cuda_device));
  }
  return "this machine has GPU " + index_list + " (nvidia-smi numbering)" +
         (cuda_list.empty() ? "; none is visible to CUDA here" : "; CUDA here sees " + cuda_list);
}

// ---- one reading ------------------------------------------------------------------------------

struct ProcessRow {
  cuda::ProcessInfo info;
  bool running = true;
  const monitor::Status* ember = nullptr;  // its allocator, when it publishes a status file
};

struct Reading {
  std::string time;  // ISO 8601, local time
  cuda::GpuSnapshot snap;
  std::vector<monitor::Status> ember;
  std::vector<std::vector<ProcessRow>> processes;  // per GPU of snap.gpus
};

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

Reading take_reading(const DeviceFilter& filter) {
  Reading r;
  r.time = now_text();
  r.snap = cuda::gpu_snapshot();
  if (!r.snap.available) return r;
  if (filter.kind != DeviceFilter::kAll) {
    std::vector<cuda::GpuStatus> kept;
    for (auto& g : r.snap.gpus)
      if (selected(filter, g)) kept.push_back(std::move(g));
    if (kept.empty()) {
      throw UsageError{"--device " + filter.spec + ": no such GPU; " + device_choices(r.snap)};
    }
    r.snap.gpus = std::move(kept);
  }
  r.ember = monitor::read_live();
  for (const auto& g : r.snap.gpus) {
    std::vector<ProcessRow> rows;
    for (const auto& p : g.processes) {
      ProcessRow row;
      row.info = p;
      // A process that exited while NVML listed it: no name and no start time.
      row.running = !p.name.empty() || monitor::process_start_time(p.pid) != 0;
      for (const auto& s : r.ember)
        if (s.pid == p.pid && s.uuid == g.uuid) row.ember = &s;
      rows.push_back(row);
    }
    r.processes.push_back(std::move(rows));
  }
  return r;
}

// ---- text -------------------------------------------------------------------------------------

std::string bytes_text(double bytes) {
  char buf[32];
  if (bytes >= double(1ULL << 30)) {
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / double(1ULL << 30));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1ULL << 20));
  }
  return buf;
}

std::string or_unknown(int v, const std::string& unit = "") {
  return v < 0 ? std::string("n/a") : std::to_string(v) + unit;
}

std::string watts(double w) {
  if (w < 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", w);
  return buf;
}

void print_text(std::ostream& os, const Reading& r) {
  os << "ember smi   " << r.time << "   driver " << r.snap.driver_release << "   "
     << r.snap.gpus.size() << " GPU(s) shown\n";
  for (size_t i = 0; i < r.snap.gpus.size(); ++i) {
    const cuda::GpuStatus& g = r.snap.gpus[i];
    os << "\nGPU " << g.index << "  "
       << (g.cuda_device >= 0 ? "cuda:" + std::to_string(g.cuda_device) : "(not visible to CUDA)")
       << "  " << g.name << "  " << g.uuid << "  " << g.pci_bus_id << "\n";
    if (!g.error.empty()) {
      os << "  error        " << g.error << "\n";
      continue;
    }
    const double pct = g.memory_total > 0 ? 100.0 * g.memory_used / g.memory_total : 0.0;
    char mem_pct[16];
    std::snprintf(mem_pct, sizeof mem_pct, "%.0f%%", pct);
    os << "  utilisation  SM " << or_unknown(g.utilization_gpu, "%") << ", memory "
       << or_unknown(g.utilization_memory, "%") << "\n"
       << "  memory       " << bytes_text(double(g.memory_used)) << " / "
       << bytes_text(double(g.memory_total)) << " (" << mem_pct << ")\n"
       << "  temperature  " << or_unknown(g.temperature_c, " C") << "\n"
       << "  power        " << watts(g.power_w) << " / " << watts(g.power_limit_w) << " W\n"
       << "  clocks       SM " << or_unknown(g.clock_sm_mhz) << " / "
       << or_unknown(g.clock_sm_max_mhz) << " MHz, memory " << or_unknown(g.clock_memory_mhz)
       << " / " << or_unknown(g.clock_memory_max_mhz) << " MHz\n"
       << "  link         PCIe Gen" << or_unknown(g.pcie_generation) << " x"
       << or_unknown(g.pcie_width) << " (max Gen" << or_unknown(g.pcie_generation_max) << " x"
       << or_unknown(g.pcie_width_max) << "), NVLink "
       << (g.nvlinks_active < 0 ? std::string("none") : std::to_string(g.nvlinks_active) + " up")
       << "\n";
    os << "  throttle     ";
    if (!g.throttle_known) {
      os << "n/a";
    } else if (g.throttle_reasons.empty()) {
      os << "none";
    } else {
      for (size_t k = 0; k < g.throttle_reasons.size(); ++k)
        os << (k ? ", " : "") << g.throttle_reasons[k];
    }
    os << "\n  ECC          ";
    if (g.ecc_enabled < 0) {
      os << "not supported";
    } else if (g.ecc_enabled == 0) {
      os << "off";
    } else {
      os << "on, " << g.ecc_corrected << " corrected, " << g.ecc_uncorrected
         << " uncorrected (volatile)";
    }
    os << "\n  processes" << (r.processes[i].empty() ? "    none" : "") << "\n";
    if (r.processes[i].empty()) continue;
    char line[200];
    std::snprintf(line, sizeof line, "    %-8s %-16s %-12s %s\n", "pid", "name", "GPU memory",
                  "ember allocated / reserved");
    os << line;
    for (const ProcessRow& p : r.processes[i]) {
      std::string ember = "-";
      if (p.ember != nullptr) {
        const double in_use =
            p.ember->reserved > 0 ? 100.0 * p.ember->allocated / p.ember->reserved : 0.0;
        char buf[96];
        std::snprintf(buf, sizeof buf, " (%.0f%% in use)", in_use);
        ember = bytes_text(double(p.ember->allocated)) + " / " +
                bytes_text(double(p.ember->reserved)) + buf;
      }
      const std::string name = p.running ? (p.info.name.empty() ? "?" : p.info.name) : "(exited)";
      std::snprintf(line, sizeof line, "    %-8u %-16s %-12s %s\n", p.info.pid, name.c_str(),
                    bytes_text(double(p.info.used_memory)).c_str(), ember.c_str());
      os << line;
    }
  }
}

// ---- JSON and CSV -----------------------------------------------------------------------------

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string num(long long v) { return v < 0 ? "null" : std::to_string(v); }
std::string num(double v) {
  if (v < 0) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

void print_json(std::ostream& os, const Reading& r) {
  os << "{\"time\":" << quoted(r.time) << ",\"driver_release\":" << quoted(r.snap.driver_release)
     << ",\"gpus\":[";
  for (size_t i = 0; i < r.snap.gpus.size(); ++i) {
    const cuda::GpuStatus& g = r.snap.gpus[i];
    os << (i ? "," : "") << "{\"index\":" << g.index
       << ",\"cuda_device\":" << num(static_cast<long long>(g.cuda_device))
       << ",\"uuid\":" << quoted(g.uuid) << ",\"name\":" << quoted(g.name)
       << ",\"pci_bus_id\":" << quoted(g.pci_bus_id)
       << ",\"error\":" << (g.error.empty() ? "null" : quoted(g.error))
       << ",\"utilization\":{\"gpu\":" << num(static_cast<long long>(g.utilization_gpu))
       << ",\"memory\":" << num(static_cast<long long>(g.utilization_memory)) << "}"
       << ",\"memory\":{\"used\":" << g.memory_used << ",\"total\":" << g.memory_total << "}"
       << ",\"temperature_c\":" << num(static_cast<long long>(g.temperature_c))
       << ",\"power\":{\"draw_w\":" << num(g.power_w) << ",\"limit_w\":" << num(g.power_limit_w)
       << "},\"clocks\":{\"sm_mhz\":" << num(static_cast<long long>(g.clock_sm_mhz))
       << ",\"memory_mhz\":" << num(static_cast<long long>(g.clock_memory_mhz))
       << ",\"sm_max_mhz\":" << num(static_cast<long long>(g.clock_sm_max_mhz))
       << ",\"memory_max_mhz\":" << num(static_cast<long long>(g.clock_memory_max_mhz))
       << "},\"pcie\":{\"generation\":" << num(static_cast<long long>(g.pcie_generation))
       << ",\"generation_max\":" << num(static_cast<long long>(g.pcie_generation_max))
       << ",\"width\":" << num(static_cast<long long>(g.pcie_width))
       << ",\"width_max\":" << num(static_cast<long long>(g.pcie_width_max))
       << "},\"nvlink_active\":" << num(static_cast<long long>(g.nvlinks_active))
       << ",\"throttle_reasons\":";
    if (!g.throttle_known) {
      os << "null";
    } else {
      os << "[";
      for (size_t k = 0; k < g.throttle_reasons.size(); ++k)
        os << (k ? "," : "") << quoted(g.throttle_reasons[k]);
      os << "]";
    }
    os << ",\"ecc\":{\"enabled\":"
       << (g.ecc_enabled < 0 ? "null"
           : g.ecc_enabled   ? "true"
                             : "false")
       << ",\"corrected\":" << num(g.ecc_corrected) << ",\"uncorrected\":" << num(g.ecc_uncorrected)
       << "},\"processes\":[";
    for (size_t k = 0; k < r.processes[i].size(); ++k) {
      const ProcessRow& p = r.processes[i][k];
      os << (k ? "," : "") << "{\"pid\":" << p.info.pid << ",\"name\":" << quoted(p.info.name)
         << ",\"running\":" << (p.running ? "true" : "false")
         << ",\"used_memory\":" << p.info.used_memory << ",\"ember\":";
      if (p.ember == nullptr) {
        os << "null";
      } else {
        os << "{\"command\":" << quoted(p.ember->command) << ",\"device\":" << p.ember->device
           << ",\"allocated\":" << p.ember->allocated << ",\"reserved\":" << p.ember->reserved
           << ",\"peak_allocated\":" << p.ember->peak_allocated
           << ",\"peak_reserved\":" << p.ember->peak_reserved
           << ",\"updated\":" << num(p.ember->updated) << "}";
      }
      os << "}";
    }
    os << "]}";
  }
  os << "]}\n";
}

constexpr const char* kCsvHeader =
    "time,index,cuda_device,uuid,name,pci_bus_id,utilization_gpu,utilization_memory,"
    "memory_used_mib,memory_total_mib,temperature_c,power_w,power_limit_w,clock_sm_mhz,"
    "clock_memory_mhz,pcie_generation,pcie_width,nvlink_active,ecc_corrected,ecc_uncorrected,"
    "throttle_reasons,processes,ember_allocated_mib,ember_reserved_mib";

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void print_csv(std::ostream& os, const Reading& r) {
  auto opt = [](long long v) { return v < 0 ? std::string() : std::to_string(v); };
  auto optd = [](double v) { return v < 0 ? std::string() : num(v); };
  for (size_t i = 0; i < r.snap.gpus.size(); ++i) {
    const cuda::GpuStatus& g = r.snap.gpus[i];
    std::string throttle;
    for (const auto& t : g.throttle_reasons) throttle += (throttle.empty() ? "" : "|") + t;
    size_t allocated = 0, reserved = 0;
    bool any_ember = false;
    for (const ProcessRow& p : r.processes[i]) {
      if (p.ember == nullptr) continue;
      any_ember = true;
      allocated += p.ember->allocated;
      reserved += p.ember->reserved;
    }
    os << r.time << "," << g.index << "," << opt(g.cuda_device) << "," << csv_field(g.uuid) << ","
       << csv_field(g.name) << "," << g.pci_bus_id << "," << opt(g.utilization_gpu) << ","
       << opt(g.utilization_memory) << "," << (g.memory_used >> 20) << "," << (g.memory_total >> 20)
       << "," << opt(g.temperature_c) << "," << optd(g.power_w) << "," << optd(g.power_limit_w)
       << "," << opt(g.clock_sm_mhz) << "," << opt(g.clock_memory_mhz) << ","
       << opt(g.pcie_generation) << "," << opt(g.pcie_width) << "," << opt(g.nvlinks_active) << ","
       << opt(g.ecc_corrected) << "," << opt(g.ecc_uncorrected) << "," << throttle << ","
       << r.processes[i].size() << "," << (any_ember ? std::to_string(allocated >> 20) : "") << ","
       << (any_ember ? std::to_string(reserved >> 20) : "") << "\n";
  }
}

// ---- the command ------------------------------------------------------------------------------

// Why no GPU can be shown, and exit code 1 (as `ember doctor`).
int no_gpu(const cuda::GpuSnapshot& snap, Format format) {
  std::string why;
  if (snap.permission_denied) {
    why = "NVML refused access (" + snap.error +
          "): run as a user allowed to use the GPUs (the video group, or root), or ask the "
          "administrator";
  } else if (!snap.available) {
    why = "no NVIDIA driver was found, so there is no GPU to monitor (" + snap.error +
          "). `ember doctor` says more";
  } else {
    why = "the NVIDIA driver " + snap.driver_release + " sees no GPU";
  }
  if (format == Format::kJson)
    std::cout << "{\"error\":" << quoted(why) << ",\"gpus\":[]}\n" << std::flush;
  std::cerr << "ember smi: " << why << "\n";
  return kExitFailure;
}

int run_smi(const Args& args) {
  if (args.has("json") && args.has("csv")) throw UsageError{"--json and --csv exclude each other"};
  const Format format = args.has("json")  ? Format::kJson
                        : args.has("csv") ? Format::kCsv
                                          : Format::kText;
  const DeviceFilter filter = parse_device(args.get("device"));
  const bool watch = args.has("watch");
  const double interval = args.get_double("watch", 0.0);
  if (watch && (!(interval > 0) || !std::isfinite(interval) || interval > 86400))
    throw UsageError{"--watch expects seconds between readings, more than 0 (e.g. 1 or 0.5)"};
  const int64_t count = args.get_int("count", watch ? 0 : 1);
  if (count < 0) throw UsageError{"--count expects a number of readings, 0 or more"};

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  const bool redraw = watch && format == Format::kText && isatty(STDOUT_FILENO) != 0;
  bool header_done = false;
  for (int64_t n = 0; !g_stop && (count == 0 || n < count); ++n) {
    if (n > 0) {
      // Sleep in small steps so that SIGINT/SIGTERM end the loop at once.
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(interval);
      while (!g_stop && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (g_stop) break;
    }
    const Reading r = take_reading(filter);
    if (!r.snap.available || r.snap.gpus.empty()) return no_gpu(r.snap, format);
    std::ostringstream out;
    if (format == Format::kJson) {
      print_json(out, r);
    } else if (format == Format::kCsv) {
      if (!header_done) out << kCsvHeader << "\n";
      header_done = true;
      print_csv(out, r);
    } else {
      if (redraw) out << "\033[H\033[2J";  // home, clear: redraw in place
      if (watch && !redraw && n > 0) out << "\n";
      print_text(out, r);
    }
    std::cout << out.str() << std::flush;
    if (!std::cout) {
      std::cerr << "ember smi: cannot write the output\n";
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

Command smi_command() {
  Command c;
  c.name = "smi";
  c.summary = "GPU monitor: utilisation, memory, temperature, power, clocks, processes";
  c.description =
      "Shows every GPU the NVIDIA driver sees (through NVML): SM and memory utilisation, memory\n"
      "used/total, temperature, power draw/limit, clocks, the PCIe and NVLink links, throttle\n"
      "reasons, ECC errors, and the compute processes with their memory. For an ember process\n"
      "that publishes a monitor status (`ember train` does) it adds the caching allocator's\n"
      "view: how much of the process's reservation is allocated. GPUs are numbered as nvidia-smi\n"
      "does, and each shows the cuda:N it has here (CUDA_VISIBLE_DEVICES applied, by UUID).\n"
      "\n"
      "Exit codes: 0 done, 1 no GPU, no driver or NVML refused (or the output could not be\n"
      "written), 2 usage error (an unknown option, or --device naming no GPU).";
  c.flags = {
      {"device", "DEV", "show one GPU: cuda:N, an nvidia-smi index N, or a UUID prefix", "all"},
      {"watch", "SECONDS", "read again every SECONDS until interrupted (redrawn on a terminal)",
       ""},
      {"count", "N", "stop after N readings (0: never)", "1, or 0 with --watch"},
      {"json", "", "one JSON object per reading, one per line", ""},
      {"csv", "", "CSV: a header, then one row per GPU per reading", ""},
  };
  c.run = run_smi;
  return c;
}

}  // namespace ember::cli
