// Fills the cuBLASLt table of cublaslt_api.h once per process.
#include "backend/cuda/cublaslt_api.h"

#include <cstdlib>
#include <string>

#include "dynload/dynlib.h"

namespace ember::cuda_detail {

namespace {

// Every entry of the table, in order, with its symbol name.
// clang-format off
#define EMBER_CUBLASLT_ENTRIES(X)   \
  X(GetStatusName)                  \
  X(GetStatusString)                \
  X(Create)                         \
  X(Matmul)                         \
  X(MatmulAlgoGetHeuristic)         \
  X(MatmulDescCreate)               \
  X(MatmulDescDestroy)              \
  X(MatmulDescSetAttribute)         \
  X(MatmulPreferenceCreate)         \
  X(MatmulPreferenceDestroy)        \
  X(MatmulPreferenceSetAttribute)   \
  X(MatrixLayoutCreate)             \
  X(MatrixLayoutDestroy)            \
  X(MatrixLayoutSetAttribute)
// clang-format on

struct Loaded {
  CublasLtApi table{};
  bool ok = false;
  std::string reason;
};

Loaded load() {
  Loaded r;
  // EMBER_CUBLASLT_LIBRARY=none means no cuBLASLt in every build, the emulated one included.
  const char* forced = std::getenv("EMBER_CUBLASLT_LIBRARY");
  if (forced != nullptr && std::string(forced) == "none") {
    r.reason = "disabled by EMBER_CUBLASLT_LIBRARY=none";
    return r;
  }
#ifdef EMBER_CUDA_SIM
#define EMBER_CUBLASLT_BIND(name) r.table.name = &::cublasLt##name;
  EMBER_CUBLASLT_ENTRIES(EMBER_CUBLASLT_BIND)
#undef EMBER_CUBLASLT_BIND
  r.ok = true;
#else
  const dynload::SharedLibrary& lib = dynload::cublaslt_library();
  if (!lib) {
    r.reason = "libcublasLt not found (" + lib.error + ")";
    return r;
  }
  r.ok = true;
#define EMBER_CUBLASLT_BIND(name)                                                              \
  r.table.name = reinterpret_cast<decltype(r.table.name)>(find_symbol(lib, "cublasLt" #name)); \
  if (r.table.name == nullptr && r.ok) {                                                       \
    r.ok = false;                                                                              \
    r.reason = lib.path + " has no cublasLt" #name;                                            \
  }
  EMBER_CUBLASLT_ENTRIES(EMBER_CUBLASLT_BIND)
#undef EMBER_CUBLASLT_BIND
#endif
  return r;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const CublasLtApi* cublaslt_api() { return loaded().ok ? &loaded().table : nullptr; }

std::string cublaslt_missing_reason() { return loaded().ok ? std::string() : loaded().reason; }

}  // namespace ember::cuda_detail
