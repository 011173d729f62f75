// A Tensor given to register_module.
#include "ember/nn.h"

using namespace ember;

struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
#ifdef EMBER_FIXED
    w = register_parameter("w", randn({4, 4}));
#else
    register_module("w", randn({4, 4}));
#endif
  }
  Tensor w;
};

int main() { return static_cast<int>(NetImpl().parameters().size()); }
