// `ember doctor`'s model: what it gathers about the build, the CUDA stack, the GPUs and the CPU,
// the diagnosis drawn from it (a pure function, tested on made-up reports) and the two outputs.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "ember/cuda.h"

namespace ember::cli::doctor {

// How a build's CUDA architectures serve a GPU of compute capability major.minor: its own machine
// code (sm_XY of the same major and no newer minor), PTX of an older architecture that the driver
// JIT-compiles on first use, or nothing (kernels cannot run).
struct ArchCoverage {
  enum Kind { kNative, kPtx, kNone } kind = kNone;
  std::string via;  // "sm_90" or "compute_80"; empty for kNone
};
// archs: CMake notation, space- or semicolon-separated ("80 90", "90-real", "80-virtual", "90a").
ArchCoverage arch_coverage(const std::string& archs, int major, int minor);

struct Library {
  std::string key;   // "cublas", "cudnn", "nccl"
  std::string name;  // "cuBLAS"
  int version = 0;   // 0: not found
  std::string path, error;
};

struct SmokeTest {
  bool run = false;
  bool alloc_ok = false;
  std::string alloc_error;
  enum Matmul { kNotRun, kOk, kMismatch, kNoKernel, kFailed } matmul = kNotRun;
  double max_abs_error = 0;
  std::string matmul_error;
};

struct Gpu {
  int index = 0;
  std::string name;
  size_t total_memory = 0;
  int major = 0, minor = 0, sm_count = 0;
  ArchCoverage coverage;
  cuda::DeviceHealth health;
  SmokeTest smoke;
};

struct Cpu {
  std::string model;
  int logical_cores = 0, ember_threads = 0;
  std::vector<std::string> features;  // "avx2", "avx512f", ...
};

struct Finding {
  enum Severity { kError, kWarning, kInfo } severity = kInfo;
  std::string id;  // stable, for scripts: "no_driver", "arch_not_covered", ...
  std::string message;
  std::string fix;  // empty when there is nothing to do
};

struct Report {
  std::string version, build_info;
  std::string cuda_build;                       // "on", "sim" or "off"
  std::string archs;                            // ember::cuda_archs()
  int runtime_version = 0, driver_version = 0;  // CUDA versions (13000 = 13.0); 0: none
  std::string driver_release;                   // the NVIDIA driver, "580.65.06"; "" unknown
  int nvml_gpus = 0;  // GPUs NVML sees (a build without CUDA still finds them this way)
  std::vector<Library> libraries;
  std::string conv_path;  // how GPU convolutions run: "cuDNN" or "im2col ..."; "" without CUDA
  std::string cpu_gemm;   // which libraries run float32 products on the CPU
  std::vector<Gpu> gpus;
  Cpu cpu;
  std::vector<Finding> findings;
  bool usable = false;  // CUDA can run ember's kernels on at least one GPU
};

// Gathers everything; smoke runs the allocation and matmul check on each GPU. Then diagnoses.
Report collect(bool smoke);
// The CPU part of the report alone (`ember bench` records it with its results).
Cpu cpu_info();
// Fills findings and usable from the gathered facts.
void diagnose(Report& r);

void print_text(std::ostream& os, const Report& r);
void print_json(std::ostream& os, const Report& r);

// "13.0" for 13000.
std::string cuda_version_string(int v);
// The oldest NVIDIA driver release that runs CUDA `major` (580 for 13); 0 when unknown.
int min_driver_release(int cuda_major);

}  // namespace ember::cli::doctor
