// What the two comparison programs share and that belongs to neither framework: the command
// line, the timing loop, the FMA peak and memcpy references, peak RSS and the one-line output.
#pragma once

#include <immintrin.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <thread>
#include <vector>

extern "C" {
char* openblas_get_config();
char* openblas_get_corename();
}

namespace compare {

// ---- command line ------------------------------------------------------------------------------

struct Args {
  std::string workload;
  int threads = 1;
  double min_time = 1.0;  // seconds of timed repetitions, at least
  int min_reps = 5;       // timed repetitions, at least
  int warmup = 2;         // untimed repetitions first
};

inline const char* kWorkloads[] = {
    "info",            // versions, thread and BLAS configuration
    "add_small",       // add of two 8-element float32 tensors: ns per op
    "add_small_grad",  // the same with requires_grad on one input (records the graph)
    "add_large",       // 16M float32 + 16M float32 into a preallocated output: GB/s (3 x 64 MiB)
    "memcpy",          // memcpy of 64 MiB split over the threads: GB/s (2 x 64 MiB)
    "sgemm512",        // square float32 matmul: GFLOP/s
    "sgemm1024",       // the same, 1024
    "sgemm2048",       // the same, 2048
    "fma_peak",        // AVX-512 FMA loop on every thread: GFLOP/s
    "mlp",             // MLP 784-512-512-10 training step, batch 128
    "cnn",             // 2-conv CNN on 1x28x28 training step, batch 64
    "transformer",     // TransformerEncoderLayer(256, 4) training step, (128, 16, 256)
};

inline void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s WORKLOAD THREADS [--min-time S] [--min-reps N] [--warmup N]\n"
               "workloads:",
               prog);
  for (const char* w : kWorkloads) std::fprintf(stderr, " %s", w);
  std::fprintf(stderr, "\n");
}

inline Args parse_args(int argc, char** argv) {
  if (argc < 3) {
    usage(argv[0]);
    std::exit(2);
  }
  Args a;
  a.workload = argv[1];
  a.threads = std::atoi(argv[2]);
  for (int i = 3; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--min-time")
      a.min_time = std::atof(argv[i + 1]);
    else if (k == "--min-reps")
      a.min_reps = std::atoi(argv[i + 1]);
    else if (k == "--warmup")
      a.warmup = std::atoi(argv[i + 1]);
    else {
      usage(argv[0]);
      std::exit(2);
    }
  }
  if (a.threads < 1) {
    usage(argv[0]);
    std::exit(2);
  }
  return a;
}

// ---- timing ------------------------------------------------------------------------------------

inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double cpu_seconds() {  // this process, every thread
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double median_s = 0;      // wall time of one repetition
  double min_s = 0;         // the fastest repetition (for a peak)
  double cpu_median_s = 0;  // process CPU time of one repetition, every thread together
  int reps = 0;
  double cpu_util = 0;  // process CPU time / wall time over the timed part: threads really busy
};

// Runs fn `warmup` times, then until both min_reps repetitions and min_time seconds are done;
// the median of the repetitions resists the other jobs on a shared machine.
inline Timing time_reps(const Args& args, const std::function<void()>& fn) {
  for (int i = 0; i < args.warmup; ++i) fn();
  std::vector<double> times, cpu_times;
  const double wall0 = wall_seconds();
  const double cpu0 = cpu_seconds();
  while (static_cast<int>(times.size()) < args.min_reps || wall_seconds() - wall0 < args.min_time) {
    const double c0 = cpu_seconds();
    const double t0 = wall_seconds();
    fn();
    times.push_back(wall_seconds() - t0);
    cpu_times.push_back(cpu_seconds() - c0);
    if (times.size() >= 100000) break;
  }
  Timing t;
  t.cpu_util = (cpu_seconds() - cpu0) / (wall_seconds() - wall0);
  std::sort(times.begin(), times.end());
  std::sort(cpu_times.begin(), cpu_times.end());
  t.median_s = times[times.size() / 2];
  t.min_s = times.front();
  t.cpu_median_s = cpu_times[cpu_times.size() / 2];
  t.reps = static_cast<int>(times.size());
  return t;
}

// ---- references that belong to neither framework -----------------------------------------------

// Runs fn(i) on n threads (i = 0..n-1), the calling thread taking i = 0.
inline void on_threads(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> pool;
  for (int i = 1; i < n; ++i) pool.emplace_back(fn, i);
  fn(0);
  for (auto& t : pool) t.join();
}

// 12 independent accumulator chains (registers 0-11, written in assembly so that the compiler
// cannot spill them) hide the FMA latency on every current x86 core. Returns the FLOPs done
// (2 per lane per FMA).
__attribute__((target("avx512f"))) inline double fma_loop_avx512(int64_t iters) {
  const float a = 0.999999f, b = 1e-7f;
  int64_t n = iters;
  __asm__ volatile(
      "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
      "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
      "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
      "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
      "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
      "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
      "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
      "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
      "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
      "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"
      "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"
      "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"
      "vbroadcastss %[a], %%zmm12\n\t"
      "vbroadcastss %[b], %%zmm13\n\t"
      "1:\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm0\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm1\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm2\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm3\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm4\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm5\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm6\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm7\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm8\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm9\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm10\n\t"
      "vfmadd231ps %%zmm12, %%zmm13, %%zmm11\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : [n] "+r"(n)
      : [a] "m"(a), [b] "m"(b)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "cc");
  return static_cast<double>(iters) * 12 * 16 * 2;
}

__attribute__((target("avx2,fma"))) inline double fma_loop_avx2(int64_t iters) {
  const float a = 0.999999f, b = 1e-7f;
  int64_t n = iters;
  __asm__ volatile(
      "vxorps %%xmm0, %%xmm0, %%xmm0\n\t"
      "vxorps %%xmm1, %%xmm1, %%xmm1\n\t"
      "vxorps %%xmm2, %%xmm2, %%xmm2\n\t"
      "vxorps %%xmm3, %%xmm3, %%xmm3\n\t"
      "vxorps %%xmm4, %%xmm4, %%xmm4\n\t"
      "vxorps %%xmm5, %%xmm5, %%xmm5\n\t"
      "vxorps %%xmm6, %%xmm6, %%xmm6\n\t"
      "vxorps %%xmm7, %%xmm7, %%xmm7\n\t"
      "vxorps %%xmm8, %%xmm8, %%xmm8\n\t"
      "vxorps %%xmm9, %%xmm9, %%xmm9\n\t"
      "vxorps %%xmm10, %%xmm10, %%xmm10\n\t"
      "vxorps %%xmm11, %%xmm11, %%xmm11\n\t"
      "vbroadcastss %[a], %%ymm12\n\t"
      "vbroadcastss %[b], %%ymm13\n\t"
      "1:\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm0\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm1\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm2\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm3\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm4\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm5\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm6\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm7\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm8\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm9\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm10\n\t"
      "vfmadd231ps %%ymm12, %%ymm13, %%ymm11\n\t"
      "dec %[n]\n\t"
      "jnz 1b\n\t"
      "vzeroupper\n\t"
      : [n] "+r"(n)
      : [a] "m"(a), [b] "m"(b)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "cc");
  return static_cast<double>(iters) * 12 * 8 * 2;
}

inline const char* fma_isa() { return __builtin_cpu_supports("avx512f") ? "avx512f" : "avx2+fma"; }

// One repetition of the FMA peak: every thread runs the loop; returns the FLOPs done.
inline double fma_peak_rep(int threads) {
  // ~0.2 GFLOP per thread with AVX-512 (a few ms): short enough that on a shared machine some
  // repetitions run without being preempted, and the fastest one is the peak.
  constexpr int64_t kIters = 500'000;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  std::vector<double> flops(static_cast<size_t>(threads));
  on_threads(threads, [&](int i) {
    flops[static_cast<size_t>(i)] = avx512 ? fma_loop_avx512(kIters) : fma_loop_avx2(kIters);
  });
  double total = 0;
  for (double f : flops) total += f;
  return total;
}

// memcpy of `bytes` split into one contiguous piece per thread.
inline void parallel_memcpy(void* dst, const void* src, size_t bytes, int threads) {
  on_threads(threads, [&](int i) {
    const size_t begin = bytes * static_cast<size_t>(i) / static_cast<size_t>(threads);
    const size_t end = bytes * static_cast<size_t>(i + 1) / static_cast<size_t>(threads);
    std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin,
                end - begin);
  });
}

// ---- the FLOPs of the training workloads (multiply-adds count 2)
// ---------------------------------

// Linear layers (in, out) with batch b, the input not requiring grad: forward x @ W^T, backward
// dW for every layer and dx for every layer but the first.
inline double mlp_step_flops(int64_t b, const std::vector<std::pair<int64_t, int64_t>>& layers) {
  double f = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    const double mac = static_cast<double>(b) * static_cast<double>(layers[i].first) *
                       static_cast<double>(layers[i].second);
    f += 2 * mac * (i == 0 ? 2 : 3);
  }
  return f;
}

// ---- output
// --------------------------------------------------------------------------------------

inline long peak_rss_kib() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;  // KiB on Linux
}

// One JSON line: {"framework":..., "workload":..., "threads":..., <metrics>, <strings>}.
struct Result {
  std::string framework, workload;
  int threads = 1;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::pair<std::string, std::string>> strings;

  void add(const std::string& k, double v) { metrics.emplace_back(k, v); }
  void add(const std::string& k, const std::string& v) { strings.emplace_back(k, v); }
  void add_timing(const Timing& t) {
    add("reps", t.reps);
    add("cpu_util", t.cpu_util);
  }

  void print() const {
    std::printf("{\"framework\":\"%s\",\"workload\":\"%s\",\"threads\":%d", framework.c_str(),
                workload.c_str(), threads);
    for (const auto& [k, v] : metrics) std::printf(",\"%s\":%.6g", k.c_str(), v);
    std::printf(",\"maxrss_kib\":%ld", peak_rss_kib());
    for (const auto& [k, v] : strings) {
      std::string e;
      for (char c : v) {
        if (c == '"' || c == '\\') e += '\\';
        e += (c == '\n' || c == '\t') ? ' ' : c;
      }
      std::printf(",\"%s\":\"%s\"", k.c_str(), e.c_str());
    }
    std::printf("}\n");
    std::fflush(stdout);
  }
};

// The workloads that need no framework, run the same way by both programs.
inline bool run_common(const Args& args, Result& r) {
  if (args.workload == "fma_peak") {
    double flops = 0;
    const Timing t = time_reps(args, [&] { flops = fma_peak_rep(args.threads); });
    r.add("gflops", flops / t.min_s * 1e-9);  // the fastest repetition: a peak
    r.add("gflops_median", flops / t.median_s * 1e-9);
    r.add_timing(t);
    r.add("isa", fma_isa());
    return true;
  }
  if (args.workload == "memcpy") {
    constexpr size_t kBytes = size_t{16} << 22;  // 16M float32 = 64 MiB
    std::vector<char> src(kBytes, 1), dst(kBytes, 0);
    const Timing t =
        time_reps(args, [&] { parallel_memcpy(dst.data(), src.data(), kBytes, args.threads); });
    r.add("gbps", 2.0 * kBytes / t.median_s * 1e-9);
    r.add("ms", t.median_s * 1e3);
    r.add_timing(t);
    return true;
  }
  if (args.workload == "info") {
    r.add("openblas_config", openblas_get_config());
    r.add("openblas_core", openblas_get_corename());
    const char* ct = std::getenv("OPENBLAS_CORETYPE");
    r.add("openblas_coretype_env", ct ? ct : "(unset)");
    return false;  // the program adds its own lines
  }
  return false;
}

}  // namespace compare
