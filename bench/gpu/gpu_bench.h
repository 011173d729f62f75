// A small harness for the GPU benchmarks: plain executables (the GPU machines have no Google
// Benchmark), timed with device synchronisation, printed as one table row per measurement.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ember/ember.h"

namespace ember::bench {

// True (after printing why) when there is no CUDA device to measure on.
inline bool skip_without_gpu(const char* program) {
  if (cuda::is_available()) return false;
  std::printf("%s: no CUDA device is available; nothing measured\n", program);
  return true;
}

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

inline void print_header(const char* title) {
  std::printf("\n%s\n%-44s %12s %10s %s\n", title, "workload", "value", "unit", "note");
}

inline void print_row(const std::string& name, double value, const char* unit,
                      const std::string& note = "") {
  std::printf("%-44s %12.3f %10s %s\n", name.c_str(), value, unit, note.c_str());
}

}  // namespace ember::bench
