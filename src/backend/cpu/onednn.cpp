// Loads oneDNN's shared library once per process and answers backends::mkldnn::is_available
// and describe (the switch itself is in core/switches.cpp).
#include "backend/cpu/onednn.h"

#include <string>

#include "dynload/dynlib.h"
#include "ember/backends.h"
#include "ember/error.h"

namespace ember::cpu {

namespace {

// dnnl_version_t of oneDNN 2.x and 3.x.
struct DnnlVersion {
  int major, minor, patch;
  const char* hash;
  unsigned cpu_runtime, gpu_runtime;
};
constexpr unsigned kRuntimeSeq = 1, kRuntimeOmp = 2;

struct Onednn {
  OnednnSgemm sgemm = nullptr;
  int (*omp_get_max_threads)() = nullptr;  // both null unless oneDNN threads with OpenMP
  void (*omp_set_num_threads)(int) = nullptr;
  std::string description;  // "oneDNN 2.6.3 (path)" or why it is missing
};

const Onednn& onednn() {
  static const Onednn lib = [] {
    Onednn o;
    const dynload::SharedLibrary so =
        dynload::open_library("EMBER_ONEDNN_LIBRARY", {"libdnnl.so.3", "libdnnl.so.2"});
    if (!so) {
      o.description = "not found (" + so.error + ")";
      return o;
    }
    auto version = reinterpret_cast<const DnnlVersion* (*)()>(find_symbol(so, "dnnl_version"));
    auto sgemm = reinterpret_cast<OnednnSgemm>(find_symbol(so, "dnnl_sgemm"));
    if (version == nullptr || sgemm == nullptr) {
      o.description = so.path + " lacks dnnl_version or dnnl_sgemm";
      return o;
    }
    const DnnlVersion* v = version();
    const std::string name = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
                             "." + std::to_string(v->patch) + " (" + so.path + ")";
    if (onednn_sgemm_corrupts_on_signal(v->major, v->minor, v->patch)) {
      // After "oneDNN " in `ember doctor`: "OpenBLAS (oneDNN 2.6.3 (path) refused: ...)".
      o.description = name.substr(7) +
                      " refused: its JIT sgemm points the stack pointer into the heap, so "
                      "a signal during a product corrupts memory (fixed in oneDNN 3.11.2)";
      return o;
    }
    if (v->cpu_runtime == kRuntimeOmp) {
      // dlsym through the handle also searches its dependencies: oneDNN's own OpenMP runtime.
      o.omp_get_max_threads = reinterpret_cast<int (*)()>(find_symbol(so, "omp_get_max_threads"));
      o.omp_set_num_threads =
          reinterpret_cast<void (*)(int)>(find_symbol(so, "omp_set_num_threads"));
      if (o.omp_get_max_threads == nullptr || o.omp_set_num_threads == nullptr) {
        o.description = name + ": its OpenMP runtime could not be found";
        return o;
      }
    } else if (v->cpu_runtime != kRuntimeSeq) {
      // TBB and threadpool builds would start threads ember cannot bound per call.
      o.description = name + ": built with CPU runtime " + std::to_string(v->cpu_runtime) +
                      ", ember needs the OpenMP or the sequential one";
      return o;
    }
    o.sgemm = sgemm;
    o.description = name;
    return o;
  }();
  return lib;
}

}  // namespace

bool onednn_sgemm_corrupts_on_signal(int major, int minor, int patch) {
  // The x64 f32 GEMM kernels kept a heap address in rsp while they ran, from the first JIT GEMM
  // through 3.11.1; 3.11.2 and 3.12 keep rsp on the stack.
  if (major != 3) return major < 3;
  if (minor != 11) return minor < 11;
  return patch < 2;
}

OnednnSgemm onednn_sgemm() { return backends::mkldnn::enabled() ? onednn().sgemm : nullptr; }

void onednn_sgemm_call(OnednnSgemm fn, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float beta, float* c, int64_t ldc) {
  const Onednn& o = onednn();
  // The caller's OpenMP setting (its own parallel regions) is restored after the call.
  const int omp_threads = o.omp_get_max_threads != nullptr ? o.omp_get_max_threads() : 1;
  if (omp_threads != 1) o.omp_set_num_threads(1);
  const int status =
      fn(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (omp_threads != 1) o.omp_set_num_threads(omp_threads);
  if (status != 0) {
    throw Error("[matmul] oneDNN's sgemm failed with status " + std::to_string(status) + " for " +
                std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k));
  }
}

}  // namespace ember::cpu

namespace ember::backends::mkldnn {

bool is_available() { return cpu::onednn().sgemm != nullptr; }
std::string describe() { return cpu::onednn().description; }

}  // namespace ember::backends::mkldnn
