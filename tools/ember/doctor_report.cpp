#include "doctor_report.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ember/ember.h"

namespace ember::cli::doctor {

// ---- architecture coverage ----------------------------------------------------------------------

ArchCoverage arch_coverage(const std::string& archs, int major, int minor) {
  const int cc = major * 10 + minor;
  int best_native = -1, best_ptx = -1;
  std::string native_name;
  std::string list = archs;
  std::replace(list.begin(), list.end(), ';', ' ');
  std::istringstream in(list);
  std::string entry;
  while (in >> entry) {
    bool real = true, ptx = true;
    if (auto dash = entry.find('-'); dash != std::string::npos) {
      const std::string kind = entry.substr(dash + 1);
      entry = entry.substr(0, dash);
      real = kind == "real";
      ptx = kind == "virtual";
    }
    size_t digits = 0;
    while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits])))
      ++digits;
    if (digits < 2) continue;  // "all", "native": not a number to compare
    const int arch = std::stoi(entry.substr(0, digits));
    // "90a", "100f": architecture-specific code, taken here to run on exactly that capability.
    const bool specific = digits < entry.size();
    if (real && (specific ? arch == cc : arch / 10 == major && arch % 10 <= minor) &&
        arch > best_native) {
      best_native = arch;
      native_name = entry;
    }
    if (ptx && !specific && arch <= cc) best_ptx = std::max(best_ptx, arch);
  }
  ArchCoverage c;
  if (best_native >= 0) {
    c.kind = ArchCoverage::kNative;
    c.via = "sm_" + native_name;
  } else if (best_ptx >= 0) {
    c.kind = ArchCoverage::kPtx;
    c.via = "compute_" + std::to_string(best_ptx);
  }
  return c;
}

std::string cuda_version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

int min_driver_release(int cuda_major) {
  switch (cuda_major) {
    case 13:
      return 580;
    case 12:
      return 525;
    case 11:
      return 450;
    default:
      return 0;
  }
}

// ---- gathering
// ------------------------------------------------------------------------------------

namespace {

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "unknown";
}

// Instruction sets the CPU has and the OS enables (AVX state saved by XSAVE).
std::vector<std::string> cpu_features() {
  std::vector<std::string> f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool sse42 = c & (1u << 20), fma = c & (1u << 12), avx = c & (1u << 28),
             osxsave = c & (1u << 27), f16c = c & (1u << 29);
  unsigned long long xcr0 = 0;
  if (osxsave) {
    unsigned lo = 0, hi = 0;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
  }
  const bool os_avx = (xcr0 & 0x6) == 0x6, os_avx512 = (xcr0 & 0xe6) == 0xe6,
             os_amx = (xcr0 & 0x60000) == 0x60000;
  if (sse42) f.push_back("sse4.2");
  if (avx && os_avx) f.push_back("avx");
  if (fma && os_avx) f.push_back("fma");
  if (f16c && os_avx) f.push_back("f16c");
  unsigned b7 = 0, c7 = 0, d7 = 0, a7 = 0;
  if (__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) {
    if ((b7 & (1u << 5)) && os_avx) f.push_back("avx2");
    if (os_avx512) {
      if (b7 & (1u << 16)) f.push_back("avx512f");
      if (b7 & (1u << 30)) f.push_back("avx512bw");
      if (b7 & (1u << 31)) f.push_back("avx512vl");
      if (c7 & (1u << 11)) f.push_back("avx512_vnni");
      if (d7 & (1u << 23)) f.push_back("avx512_fp16");
      unsigned a71 = 0, b71 = 0, c71 = 0, d71 = 0;
      if (__get_cpuid_count(7, 1, &a71, &b71, &c71, &d71) && (a71 & (1u << 5)))
        f.push_back("avx512_bf16");
    }
    if (os_amx && (d7 & (1u << 24))) f.push_back("amx_tile");
  }
#endif
  return f;
}

// Allocation and a host round trip, then a 64x64x64 matmul on the device against the CPU's.
SmokeTest smoke_test(int index) {
  SmokeTest s;
  s.run = true;
  const Device dev(kCUDA, index);
  manual_seed(1234);
  Tensor a = randn({64, 64}), b = randn({64, 64});
  Tensor da, db;
  try {
    Tensor big = empty({int64_t{1} << 22}, TensorOptions(kFloat32).device(dev));  // 16 MiB
    da = a.to(dev);
    db = b.to(dev);
    const float diff = (da.cpu() - a).abs().max().item<float>();
    if (diff != 0.0f) throw Error("[doctor] a host -> device -> host round trip changed the data");
    s.alloc_ok = true;
  } catch (const Error& e) {
    s.alloc_error = e.what();
    return s;
  }
  try {
    Tensor ref = a.matmul(b);
    Tensor got = da.matmul(db).cpu();
    s.max_abs_error = (got - ref).abs().max().item<double>();
    // Sums of 64 products of N(0, 1) values: fp32 gives ~1e-5, TF32 ~1e-3.
    s.matmul = std::isfinite(s.max_abs_error) && s.max_abs_error < 1e-2 ? SmokeTest::kOk
                                                                        : SmokeTest::kMismatch;
  } catch (const NotImplementedError& e) {  // "[matmul] has no CUDA kernel"
    s.matmul = SmokeTest::kNoKernel;
    s.matmul_error = e.what();
  } catch (const Error& e) {
    s.matmul = SmokeTest::kFailed;
    s.matmul_error = e.what();
  }
  return s;
}

std::string cuda_build_of(const std::string& info) {
  for (const char* v : {"sim", "on", "off"})
    if (info.find(std::string("cuda=") + v) != std::string::npos) return v;
  return "off";
}

}  // namespace

Cpu cpu_info() {
  Cpu cpu;
  cpu.model = read_cpu_model();
  cpu.logical_cores = static_cast<int>(std::thread::hardware_concurrency());
  cpu.ember_threads = get_num_threads();
  cpu.features = cpu_features();
  return cpu;
}

Report collect(bool smoke) {
  Report r;
  r.version = kVersion;
  r.build_info = build_info();
  r.cuda_build = cuda_build_of(r.build_info);
  r.archs = cuda_archs();
  r.runtime_version = cuda::runtime_version();
  r.driver_version = cuda::driver_version();
  r.driver_release = cuda::driver_release();
  r.nvml_gpus = cuda::nvml_device_count();
  for (auto [key, name] : {std::pair{"cublas", "cuBLAS"}, {"cudnn", "cuDNN"}, {"nccl", "NCCL"}}) {
    Library lib;
    lib.key = key;
    lib.name = name;
    lib.version = key == std::string("cublas")  ? cuda::cublas_version()
                  : key == std::string("cudnn") ? cuda::cudnn_version()
                                                : cuda::nccl_version();
    lib.path = cuda::library_path(key);
    lib.error = cuda::library_error(key);
    r.libraries.push_back(lib);
  }
  if (r.cuda_build != "off") {
    r.conv_path = !backends::cudnn::is_available() ? "im2col + cuBLASLt (cuDNN not available)"
                  : backends::cudnn::enabled()
                      ? "cuDNN"
                      : "im2col + cuBLASLt (cuDNN disabled, EMBER_CUDNN=0)";
  }
  r.cpu_gemm =
      !backends::mkldnn::is_available() ? "OpenBLAS (oneDNN " + backends::mkldnn::describe() + ")"
      : backends::mkldnn::enabled() ? backends::mkldnn::describe() + " where faster, else OpenBLAS"
                                    : "OpenBLAS (oneDNN disabled, EMBER_ONEDNN=0)";
  for (int i = 0; i < cuda::device_count(); ++i) {
    Gpu g;
    g.index = i;
    const cuda::DeviceProperties p = cuda::get_device_properties(i);
    g.name = p.name;
    g.total_memory = p.total_memory;
    g.major = p.major;
    g.minor = p.minor;
    g.sm_count = p.multi_processor_count;
    g.coverage = arch_coverage(r.archs, p.major, p.minor);
    try {
      g.health = cuda::device_health(i);
    } catch (const Error& e) {  // the device's PCI bus id could not be read
      g.health.error = e.what();
    }
    if (smoke && g.coverage.kind != ArchCoverage::kNone) g.smoke = smoke_test(i);
    r.gpus.push_back(std::move(g));
  }
  r.cpu = cpu_info();
  diagnose(r);
  return r;
}

// ---- diagnosis
// ---------------------------------------------------------------------------------------

void diagnose(Report& r) {
  r.findings.clear();
  auto add = [&](Finding::Severity s, std::string id, std::string msg, std::string fix = {}) {
    r.findings.push_back({s, std::move(id), std::move(msg), std::move(fix)});
  };
  const int runtime_major = r.runtime_version / 1000;
  const int need = min_driver_release(runtime_major);
  const std::string need_text = need > 0 ? " (CUDA " + std::to_string(runtime_major) +
                                               " needs driver >= " + std::to_string(need) + ")"
                                         : "";
  const auto gpus_seen = [&] {
    return std::to_string(r.nvml_gpus) + " NVIDIA GPU" + (r.nvml_gpus == 1 ? "" : "s");
  };

  if (r.cuda_build == "off") {
    add(Finding::kError, "build_without_cuda",
        "no GPU can be used: this ember was built without CUDA" +
            (r.nvml_gpus > 0 ? " (this machine has " + gpus_seen() + ")" : std::string()),
        "rebuild with -DEMBER_CUDA=ON (needs nvcc: put the CUDA toolkit's bin/ in PATH or set "
        "CUDA_HOME)");
  } else if (r.driver_version == 0) {
    add(Finding::kError, "no_driver",
        "no GPU can be used: no NVIDIA driver was found (libcuda.so.1)",
        "on a machine with an NVIDIA GPU, install the NVIDIA driver" + need_text +
            "; in a container, start it with the GPUs passed through (docker run --gpus all)");
  } else if (r.driver_version < r.runtime_version &&
             (r.driver_version / 1000 < runtime_major || r.gpus.empty())) {
    add(Finding::kError, "driver_too_old",
        "the NVIDIA driver " + (r.driver_release.empty() ? "" : r.driver_release + " ") +
            "supports CUDA " + cuda_version_string(r.driver_version) + " but ember uses the CUDA " +
            cuda_version_string(r.runtime_version) + " runtime",
        "update the NVIDIA driver" + need_text + ", or build ember with an older CUDA toolkit");
  } else if (r.gpus.empty()) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    add(Finding::kError, "no_gpu",
        "no GPU: the driver is installed but no CUDA device is visible" +
            (r.nvml_gpus > 0 ? " (NVML sees " + gpus_seen() + ")" : std::string()),
        std::string("check nvidia-smi") +
            (visible ? ", CUDA_VISIBLE_DEVICES (now '" + std::string(visible) + "')" : "") +
            " and that /dev/nvidia* can be opened by this user");
  } else if (r.driver_version < r.runtime_version) {
    add(Finding::kWarning, "driver_older_minor",
        "the driver supports CUDA " + cuda_version_string(r.driver_version) + ", older than the " +
            cuda_version_string(r.runtime_version) +
            " runtime: it runs through minor-version compatibility, without PTX JIT",
        "update the NVIDIA driver" + need_text);
  }

  bool any_runs = false;
  for (const Gpu& g : r.gpus) {
    const std::string who = "GPU " + std::to_string(g.index) + " (" + g.name + ", sm_" +
                            std::to_string(g.major * 10 + g.minor) + ")";
    const std::string cc = std::to_string(g.major * 10 + g.minor);
    if (g.coverage.kind == ArchCoverage::kNone) {
      add(Finding::kError, "arch_not_covered",
          who + " is not covered by this build's CUDA architectures (" + r.archs + ")",
          "rebuild with -DEMBER_CUDA_ARCHS=" + cc + " (or \"" + r.archs + " " + cc +
              "\" with ';' between entries)");
      continue;
    }
    if (g.coverage.kind == ArchCoverage::kPtx) {
      add(Finding::kWarning, "arch_ptx_jit",
          who + " runs ember's kernels JIT-compiled from " + g.coverage.via +
              " PTX: the first use of each kernel is slow",
          "rebuild with -DEMBER_CUDA_ARCHS=" + cc + " for native code");
    }
    if (g.smoke.run && !g.smoke.alloc_ok) {
      add(Finding::kError, "smoke_alloc_failed",
          who + ": allocation or copy failed: " + g.smoke.alloc_error);
      continue;
    }
    switch (g.smoke.matmul) {
      case SmokeTest::kMismatch:
        add(Finding::kError, "smoke_matmul_mismatch",
            who + ": a 64x64 matmul differs from the CPU's by " +
                std::to_string(g.smoke.max_abs_error));
        continue;
      case SmokeTest::kFailed:
        add(Finding::kError, "smoke_matmul_failed",
            who + ": matmul failed: " + g.smoke.matmul_error);
        continue;
      case SmokeTest::kNoKernel:
        add(Finding::kWarning, "matmul_no_kernel",
            who + ": this build has no CUDA matmul kernel yet; allocation and copies work");
        break;
      default:
        break;
    }
    any_runs = true;
  }

  if (r.cuda_build != "off") {
    for (const Library& lib : r.libraries) {
      if (lib.version > 0) continue;
      const std::string what =
          lib.key == "cublas" ? "GPU matmul and linear layers need it"
          : lib.key == "cudnn"
              ? "GPU convolutions run as im2col + cuBLASLt instead of through cuDNN"
              : "multi-GPU and multi-node training with the \"nccl\" backend are "
                "disabled (\"gloo\" on the CPU still works)";
      add(Finding::kWarning, lib.key + "_missing", lib.name + " was not found: " + what,
          "install " + lib.name + " for CUDA " + std::to_string(runtime_major) +
              " and make it visible to the loader (ldconfig or LD_LIBRARY_PATH)");
    }
  }
  if (r.cuda_build == "sim") {
    add(Finding::kInfo, "emulated",
        "the devices are emulated by the SIMT emulator (ember_sim): right results, not GPU speed");
  }
  const bool errors = std::any_of(r.findings.begin(), r.findings.end(),
                                  [](const Finding& f) { return f.severity == Finding::kError; });
  r.usable = r.cuda_build != "off" && !r.gpus.empty() && any_runs && !errors;
}

// ---- output
// ------------------------------------------------------------------------------------------

namespace {

std::string gib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

const char* coverage_kind(const ArchCoverage& c) {
  switch (c.kind) {
    case ArchCoverage::kNative:
      return "native";
    case ArchCoverage::kPtx:
      return "ptx";
    default:
      return "none";
  }
}

const char* matmul_status(SmokeTest::Matmul m) {
  switch (m) {
    case SmokeTest::kOk:
      return "ok";
    case SmokeTest::kMismatch:
      return "mismatch";
    case SmokeTest::kNoKernel:
      return "no_kernel";
    case SmokeTest::kFailed:
      return "failed";
    default:
      return "not_run";
  }
}

const char* severity_name(Finding::Severity s) {
  switch (s) {
    case Finding::kError:
      return "error";
    case Finding::kWarning:
      return "warning";
    default:
      return "info";
  }
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

void row(std::ostream& os, const std::string& label, const std::string& text) {
  os << "  " << label << std::string(label.size() < 10 ? 10 - label.size() : 1, ' ') << text
     << "\n";
}

}  // namespace

void print_text(std::ostream& os, const Report& r) {
  os << "ember doctor\n\n";
  row(os, "ember", r.version + "  (" + r.build_info + ")");
  row(os, "build",
      r.cuda_build == "off"   ? std::string("without CUDA")
      : r.cuda_build == "sim" ? "emulated CUDA (SIMT emulator), archs " + r.archs
                              : "CUDA, archs " + r.archs);
  std::string cuda = "runtime " + cuda_version_string(r.runtime_version) + ", driver " +
                     (r.driver_version > 0 ? "supports " + cuda_version_string(r.driver_version)
                                           : std::string("none"));
  if (!r.driver_release.empty()) cuda += " (NVIDIA " + r.driver_release + ")";
  row(os, "CUDA", r.cuda_build == "off" ? "not built in" : cuda);
  for (const Library& lib : r.libraries) {
    row(os, lib.name,
        lib.version > 0 ? cuda::format_library_version(lib.key, lib.version) + "  " + lib.path
                        : "not found (" + lib.error + ")");
  }
  if (!r.conv_path.empty()) row(os, "Conv", r.conv_path);
  row(os, "CPU",
      r.cpu.model + ", " + std::to_string(r.cpu.logical_cores) + " logical cores, " +
          std::to_string(r.cpu.ember_threads) + " ember threads");
  row(os, "",
      "instruction sets: " +
          (r.cpu.features.empty() ? std::string("(unknown)") : join(r.cpu.features, " ")));
  if (!r.cpu_gemm.empty()) row(os, "GEMM", r.cpu_gemm);
  if (r.gpus.empty()) row(os, "GPUs", "none");
  for (const Gpu& g : r.gpus) {
    os << "\n";
    row(os, "GPU " + std::to_string(g.index),
        g.name + ", " + gib(g.total_memory) + ", compute capability " + std::to_string(g.major) +
            "." + std::to_string(g.minor) + ", " + std::to_string(g.sm_count) + " SMs");
    row(os, "",
        "code: " + (g.coverage.kind == ArchCoverage::kNative ? g.coverage.via + " (native)"
                    : g.coverage.kind == ArchCoverage::kPtx
                        ? g.coverage.via + " PTX, JIT-compiled by the driver"
                        : "none of " + r.archs + " runs here"));
    const cuda::DeviceHealth& h = g.health;
    if (h.available) {
      char buf[256];
      std::snprintf(
          buf, sizeof buf,
          "health: %d%% busy, %s of %s used, %d C, %.0f W / %.0f W, SM %d MHz, %zu processes",
          h.utilization_gpu, gib(h.memory_used).c_str(), gib(h.memory_total).c_str(),
          h.temperature_c, h.power_w, h.power_limit_w, h.clock_sm_mhz, h.processes.size());
      row(os, "", buf);
    } else {
      row(os, "", "health: unavailable (" + h.error + ")");
    }
    if (g.smoke.run) {
      std::string s = "smoke test: allocation and copies ";
      s += g.smoke.alloc_ok ? "OK" : "FAILED";
      if (g.smoke.alloc_ok) {
        char buf[96];
        switch (g.smoke.matmul) {
          case SmokeTest::kOk:
          case SmokeTest::kMismatch:
            std::snprintf(buf, sizeof buf, ", matmul 64x64 vs CPU max error %.2g: %s",
                          g.smoke.max_abs_error, g.smoke.matmul == SmokeTest::kOk ? "OK" : "WRONG");
            s += buf;
            break;
          case SmokeTest::kNoKernel:
            s += ", matmul: no CUDA kernel in this build";
            break;
          case SmokeTest::kFailed:
            s += ", matmul FAILED";
            break;
          default:
            break;
        }
      }
      row(os, "", s);
    }
  }
  os << "\n";
  if (r.findings.empty()) os << "No problems found.\n";
  for (const Finding& f : r.findings) {
    os << severity_name(f.severity) << ": " << f.message << "\n";
    if (!f.fix.empty()) os << "  fix: " << f.fix << "\n";
  }
  os << "\n"
     << (r.usable ? "OK: CUDA is usable" : "CUDA is not usable: ember runs on the CPU") << "\n";
}

namespace {

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

void print_json(std::ostream& os, const Report& r) {
  os << "{\"ember_version\":" << quote(r.version) << ",\"build_info\":" << quote(r.build_info)
     << ",\"cuda_build\":" << quote(r.cuda_build) << ",\"cuda_archs\":" << quote(r.archs)
     << ",\"cuda_runtime_version\":" << r.runtime_version
     << ",\"cuda_driver_version\":" << r.driver_version
     << ",\"driver_release\":" << quote(r.driver_release) << ",\"nvml_gpus\":" << r.nvml_gpus
     << ",\"libraries\":{";
  for (size_t i = 0; i < r.libraries.size(); ++i) {
    const Library& l = r.libraries[i];
    os << (i ? "," : "") << quote(l.key) << ":{\"name\":" << quote(l.name)
       << ",\"version\":" << l.version
       << ",\"version_string\":" << quote(cuda::format_library_version(l.key, l.version))
       << ",\"path\":" << quote(l.path) << ",\"error\":" << quote(l.error) << "}";
  }
  os << "},\"conv_path\":" << quote(r.conv_path) << ",\"cpu_gemm\":" << quote(r.cpu_gemm);
  os << ",\"cpu\":{\"model\":" << quote(r.cpu.model) << ",\"logical_cores\":" << r.cpu.logical_cores
     << ",\"ember_threads\":" << r.cpu.ember_threads << ",\"features\":[";
  for (size_t i = 0; i < r.cpu.features.size(); ++i)
    os << (i ? "," : "") << quote(r.cpu.features[i]);
  os << "]},\"gpus\":[";
  for (size_t i = 0; i < r.gpus.size(); ++i) {
    const Gpu& g = r.gpus[i];
    const cuda::DeviceHealth& h = g.health;
    os << (i ? "," : "") << "{\"index\":" << g.index << ",\"name\":" << quote(g.name)
       << ",\"total_memory\":" << g.total_memory << ",\"compute_capability\":"
       << quote(std::to_string(g.major) + "." + std::to_string(g.minor))
       << ",\"sm_count\":" << g.sm_count
       << ",\"coverage\":{\"kind\":" << quote(coverage_kind(g.coverage))
       << ",\"via\":" << quote(g.coverage.via) << "}"
       << ",\"health\":{\"available\":" << (h.available ? "true" : "false")
       << ",\"error\":" << quote(h.error) << ",\"utilization_gpu\":" << h.utilization_gpu
       << ",\"utilization_memory\":" << h.utilization_memory << ",\"memory_used\":" << h.memory_used
       << ",\"memory_total\":" << h.memory_total << ",\"temperature_c\":" << h.temperature_c
       << ",\"power_w\":" << number(h.power_w) << ",\"power_limit_w\":" << number(h.power_limit_w)
       << ",\"clock_sm_mhz\":" << h.clock_sm_mhz << ",\"processes\":[";
    for (size_t k = 0; k < h.processes.size(); ++k) {
      const cuda::ProcessInfo& p = h.processes[k];
      os << (k ? "," : "") << "{\"pid\":" << p.pid << ",\"used_memory\":" << p.used_memory
         << ",\"name\":" << quote(p.name) << "}";
    }
    os << "]},\"smoke_test\":{\"run\":" << (g.smoke.run ? "true" : "false")
       << ",\"alloc_ok\":" << (g.smoke.alloc_ok ? "true" : "false")
       << ",\"alloc_error\":" << quote(g.smoke.alloc_error)
       << ",\"matmul\":" << quote(matmul_status(g.smoke.matmul))
       << ",\"max_abs_error\":" << number(g.smoke.max_abs_error)
       << ",\"matmul_error\":" << quote(g.smoke.matmul_error) << "}}";
  }
  os << "],\"findings\":[";
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    os << (i ? "," : "") << "{\"severity\":" << quote(severity_name(f.severity))
       << ",\"id\":" << quote(f.id) << ",\"message\":" << quote(f.message)
       << ",\"fix\":" << quote(f.fix) << "}";
  }
  os << "],\"usable\":" << (r.usable ? "true" : "false") << "}\n";
}

}  // namespace ember::cli::doctor
