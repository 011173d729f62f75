// oneDNN on the CPU, loaded at run time (ember is never linked against it): its row-major sgemm,
// which runs most float32 products faster than OpenBLAS on AVX-512 and AVX2 cores.
#pragma once

#include <cstdint>

namespace ember::cpu {

// dnnl_sgemm: row-major C = alpha * op(A) op(B) + beta * C; returns dnnl_success (0) or an error.
using OnednnSgemm = int (*)(char transa, char transb, int64_t m, int64_t n, int64_t k, float alpha,
                            const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                            float* c, int64_t ldc);

// Whether this oneDNN version's x64 JIT sgemm moves the stack pointer into heap memory while it
// runs, so that any signal delivered to the thread during a product (Ctrl-C, a profiler's
// SIGPROF) writes its frame into the heap: every version before 3.11.2. Such a library is never
// used; float32 products go to OpenBLAS.
bool onednn_sgemm_corrupts_on_signal(int major, int minor, int patch);

// oneDNN's sgemm when the library is loaded and backends::mkldnn::enabled(), else nullptr.
OnednnSgemm onednn_sgemm();

// Runs one sgemm through oneDNN on the calling thread alone (its OpenMP team, if oneDNN was built
// with OpenMP, is one thread for the call: ember's own threads split larger products). Throws
// RuntimeError naming the status when oneDNN fails.
void onednn_sgemm_call(OnednnSgemm fn, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                       float alpha, const float* a, int64_t lda, const float* b, int64_t ldb,
                       float beta, float* c, int64_t ldc);

}  // namespace ember::cpu
