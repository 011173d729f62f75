// `ember doctor`'s architecture coverage and diagnosis on made-up reports, and its report of this
// machine (the command itself is run by the doctor.* tests).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "doctor_report.h"
#include "ember/ember.h"

using namespace ember;
using namespace ember::cli::doctor;

namespace {

bool has(const Report& r, const std::string& id) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [&](const Finding& f) { return f.id == id; });
}

const Finding& get(const Report& r, const std::string& id) {
  auto it = std::find_if(r.findings.begin(), r.findings.end(),
                         [&](const Finding& f) { return f.id == id; });
  if (it == r.findings.end()) throw std::runtime_error("no finding " + id);
  return *it;
}

// A healthy CUDA 13 machine with one H100, all libraries present.
Report healthy() {
  Report r;
  r.version = "0.1.0";
  r.build_info = "blas=openblas cuda=on build=release";
  r.cuda_build = "on";
  r.archs = "80 90";
  r.runtime_version = 13000;
  r.driver_version = 13000;
  r.driver_release = "580.65.06";
  r.nvml_gpus = 1;
  r.libraries = {{"cublas", "cuBLAS", 130100, "/lib/libcublasLt.so.13", ""},
                 {"cudnn", "cuDNN", 91300, "/lib/libcudnn.so.9", ""},
                 {"nccl", "NCCL", 22703, "/lib/libnccl.so.2", ""}};
  Gpu g;
  g.name = "NVIDIA H100";
  g.total_memory = size_t{80} << 30;
  g.major = 9;
  g.minor = 0;
  g.sm_count = 132;
  g.coverage = arch_coverage(r.archs, 9, 0);
  g.smoke.run = true;
  g.smoke.alloc_ok = true;
  g.smoke.matmul = SmokeTest::kOk;
  r.gpus.push_back(g);
  return r;
}

}  // namespace

TEST(DoctorArch, NativeCodeOfTheSameMajorAndNoNewerMinor) {
  EXPECT_EQ(arch_coverage("80 90", 9, 0).via, "sm_90");
  EXPECT_EQ(arch_coverage("80;90", 9, 0).kind, ArchCoverage::kNative);
  // sm_80 machine code runs on 8.6 and 8.9, never on 8.0 from sm_86.
  EXPECT_EQ(arch_coverage("80 90", 8, 6).via, "sm_80");
  EXPECT_EQ(arch_coverage("80 86", 8, 9).via, "sm_86");
  EXPECT_EQ(arch_coverage("86-real", 8, 0).kind, ArchCoverage::kNone);
}

TEST(DoctorArch, PtxOfAnOlderArchitectureIsJitCompiled) {
  const ArchCoverage c = arch_coverage("80 90", 12, 0);  // Blackwell RTX: no sm_120 code
  EXPECT_EQ(c.kind, ArchCoverage::kPtx);
  EXPECT_EQ(c.via, "compute_90");
  EXPECT_EQ(arch_coverage("90-virtual", 10, 0).via, "compute_90");
  // -real carries no PTX; PTX never runs on an older GPU.
  EXPECT_EQ(arch_coverage("80-real 90-real", 10, 0).kind, ArchCoverage::kNone);
  EXPECT_EQ(arch_coverage("90", 8, 0).kind, ArchCoverage::kNone);
}

TEST(DoctorArch, ArchitectureSpecificCodeRunsOnlyThere) {
  EXPECT_EQ(arch_coverage("90a-real", 9, 0).via, "sm_90a");
  EXPECT_EQ(arch_coverage("90a-real", 10, 0).kind, ArchCoverage::kNone);
  EXPECT_EQ(arch_coverage("", 9, 0).kind, ArchCoverage::kNone);
  EXPECT_EQ(arch_coverage("all native", 9, 0).kind, ArchCoverage::kNone);
}

TEST(DoctorDiagnosis, HealthyMachineIsUsableWithoutFindings) {
  Report r = healthy();
  diagnose(r);
  EXPECT_TRUE(r.usable);
  EXPECT_TRUE(r.findings.empty()) << r.findings[0].message;
}

TEST(DoctorDiagnosis, BuildWithoutCudaSaysHowToRebuild) {
  Report r = healthy();
  r.cuda_build = "off";
  r.archs.clear();
  r.gpus.clear();
  r.runtime_version = r.driver_version = 0;
  r.nvml_gpus = 2;
  diagnose(r);
  EXPECT_FALSE(r.usable);
  const Finding& f = get(r, "build_without_cuda");
  EXPECT_EQ(f.severity, Finding::kError);
  EXPECT_NE(f.message.find("this machine has 2 NVIDIA GPUs"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("-DEMBER_CUDA=ON"), std::string::npos);
  EXPECT_FALSE(has(r, "cudnn_missing"));  // irrelevant without CUDA
}

TEST(DoctorDiagnosis, NoDriver) {
  Report r = healthy();
  r.driver_version = 0;
  r.driver_release.clear();
  r.gpus.clear();
  diagnose(r);
  EXPECT_FALSE(r.usable);
  const Finding& f = get(r, "no_driver");
  EXPECT_NE(f.message.find("no GPU"), std::string::npos);
  EXPECT_NE(f.fix.find("driver >= 580"), std::string::npos) << f.fix;
}

TEST(DoctorDiagnosis, DriverOlderThanTheRuntime) {
  Report r = healthy();
  r.driver_version = 12080;  // a 570 driver: CUDA 12.8
  r.driver_release = "570.133.20";
  r.gpus.clear();  // cudart 13 finds no device on it
  diagnose(r);
  EXPECT_FALSE(r.usable);
  const Finding& f = get(r, "driver_too_old");
  EXPECT_NE(f.message.find("supports CUDA 12.8"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("CUDA 13.0 runtime"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("CUDA 13 needs driver >= 580"), std::string::npos) << f.fix;
  EXPECT_FALSE(has(r, "no_gpu"));
}

TEST(DoctorDiagnosis, OlderMinorDriverOnlyWarns) {
  Report r = healthy();
  r.runtime_version = 12080;
  r.driver_version = 12040;
  diagnose(r);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(get(r, "driver_older_minor").severity, Finding::kWarning);
}

TEST(DoctorDiagnosis, DriverWithoutVisibleGpu) {
  Report r = healthy();
  r.gpus.clear();
  r.nvml_gpus = 0;
  diagnose(r);
  EXPECT_FALSE(r.usable);
  EXPECT_NE(get(r, "no_gpu").fix.find("nvidia-smi"), std::string::npos);
}

TEST(DoctorDiagnosis, ArchitectureNotCoveredSaysWhichToAdd) {
  Report r = healthy();
  r.archs = "90";
  r.gpus[0].name = "NVIDIA A100";
  r.gpus[0].major = 8;
  r.gpus[0].minor = 0;
  r.gpus[0].coverage = arch_coverage(r.archs, 8, 0);
  r.gpus[0].smoke = SmokeTest{};
  diagnose(r);
  EXPECT_FALSE(r.usable);
  const Finding& f = get(r, "arch_not_covered");
  EXPECT_NE(f.message.find("NVIDIA A100, sm_80"), std::string::npos) << f.message;
  EXPECT_NE(f.fix.find("-DEMBER_CUDA_ARCHS=80"), std::string::npos) << f.fix;
}

TEST(DoctorDiagnosis, PtxJitWarnsButRuns) {
  Report r = healthy();
  r.gpus[0].major = 12;
  r.gpus[0].coverage = arch_coverage(r.archs, 12, 0);
  diagnose(r);
  EXPECT_TRUE(r.usable);
  EXPECT_NE(get(r, "arch_ptx_jit").fix.find("-DEMBER_CUDA_ARCHS=120"), std::string::npos);
}

TEST(DoctorDiagnosis, MissingLibrariesNameWhatTheyDisable) {
  Report r = healthy();
  r.libraries[1].version = 0;
  r.libraries[2].version = 0;
  diagnose(r);
  EXPECT_TRUE(r.usable);
  EXPECT_NE(get(r, "cudnn_missing").message.find("convolutions"), std::string::npos);
  EXPECT_NE(get(r, "nccl_missing").message.find("multi-GPU"), std::string::npos);
  EXPECT_FALSE(has(r, "cublas_missing"));
}

TEST(DoctorDiagnosis, SmokeTestFailuresMakeCudaUnusable) {
  Report r = healthy();
  r.gpus[0].smoke.matmul = SmokeTest::kMismatch;
  r.gpus[0].smoke.max_abs_error = 3.5;
  diagnose(r);
  EXPECT_FALSE(r.usable);
  EXPECT_TRUE(has(r, "smoke_matmul_mismatch"));

  r.gpus[0].smoke.alloc_ok = false;
  r.gpus[0].smoke.alloc_error = "[cuda] cudaMalloc: out of memory";
  diagnose(r);
  EXPECT_FALSE(r.usable);
  EXPECT_NE(get(r, "smoke_alloc_failed").message.find("out of memory"), std::string::npos);
}

TEST(DoctorDiagnosis, MissingMatmulKernelOnlyWarns) {
  Report r = healthy();
  r.gpus[0].smoke.matmul = SmokeTest::kNoKernel;
  diagnose(r);
  EXPECT_TRUE(r.usable);
  EXPECT_EQ(get(r, "matmul_no_kernel").severity, Finding::kWarning);
}

TEST(DoctorOutput, JsonEscapesAndTextGivesTheVerdict) {
  Report r = healthy();
  r.gpus[0].name = "quote\" back\\slash\nnew line";
  r.libraries[1].version = 0;
  r.libraries[1].error = "libcudnn.so.9: cannot open shared object file";
  diagnose(r);
  std::ostringstream js, text;
  print_json(js, r);
  EXPECT_NE(js.str().find(R"("name":"quote\" back\\slash\nnew line")"), std::string::npos);
  EXPECT_NE(js.str().find(R"("usable":true)"), std::string::npos);
  print_text(text, r);
  EXPECT_NE(text.str().find("cuDNN     not found (libcudnn.so.9"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("OK: CUDA is usable"), std::string::npos);
  // The CPU's matrix-product libraries get a row of their own.
  r.cpu_gemm = "oneDNN 2.6.3 (/usr/lib/libdnnl.so.2) where faster, else OpenBLAS";
  std::ostringstream js2, text2;
  print_json(js2, r);
  print_text(text2, r);
  EXPECT_NE(js2.str().find(R"("cpu_gemm":"oneDNN 2.6.3)"), std::string::npos) << js2.str();
  EXPECT_NE(text2.str().find("  GEMM      oneDNN 2.6.3"), std::string::npos) << text2.str();
}

TEST(DoctorVersions, CudaAndLibraryVersionStrings) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12080), "12.8");
  EXPECT_EQ(cuda_version_string(0), "none");
  EXPECT_EQ(min_driver_release(13), 580);
  EXPECT_EQ(cuda::format_library_version("cudnn", 91300), "9.13.0");
  EXPECT_EQ(cuda::format_library_version("cudnn", 8902), "8.9.2");
  EXPECT_EQ(cuda::format_library_version("nccl", 22703), "2.27.3");
  EXPECT_EQ(cuda::format_library_version("cublas", 130100), "13.1.0");
  EXPECT_EQ(cuda::format_library_version("cublas", 0), "");
}

// This machine, whatever it has: the verdict agrees with what the library says about CUDA.
TEST(DoctorCollect, ThisMachine) {
  const Report r = collect(true);
  EXPECT_EQ(r.version, kVersion);
  EXPECT_FALSE(r.cpu.model.empty());
  EXPECT_EQ(r.cpu_gemm.find("oneDNN") == 0,
            backends::mkldnn::is_available() && backends::mkldnn::enabled())
      << r.cpu_gemm;
  EXPECT_GE(r.cpu.logical_cores, 1);
  EXPECT_EQ(static_cast<int>(r.gpus.size()), cuda::device_count());
  if (!cuda::is_available()) {
    EXPECT_FALSE(r.usable);
    const bool explained = has(r, "build_without_cuda") || has(r, "no_driver") ||
                           has(r, "driver_too_old") || has(r, "no_gpu");
    EXPECT_TRUE(explained);
  }
  for (const Gpu& g : r.gpus) {
    EXPECT_TRUE(g.smoke.run);
    EXPECT_TRUE(g.smoke.alloc_ok) << g.smoke.alloc_error;
  }
}
