// Build options compiled into this library (each variant compiles this file itself).
#include "ember/version.h"

namespace ember {

const char* build_info() {
  return "blas=openblas"
#if defined(EMBER_CUDA_SIM)
         " cuda=sim"
#elif defined(EMBER_CUDA_REAL)
         " cuda=on"
#else
         " cuda=off"
#endif
#ifdef NDEBUG
         " build=release";
#else
         " build=debug";
#endif
}

const char* cuda_archs() {
#ifdef EMBER_CUDA_ARCHS_LIST
  return EMBER_CUDA_ARCHS_LIST;
#else
  return "";
#endif
}

}  // namespace ember
