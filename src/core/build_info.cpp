// Build options compiled into this library.
#include "ember/version.h"

namespace ember {

const char* build_info() {
  return "blas=openblas cuda=off"
#ifdef NDEBUG
         " build=release";
#else
         " build=debug";
#endif
}

}  // namespace ember
