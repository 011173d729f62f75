// A shared_ptr to a class that is not an nn::Module given to register_module.
#include <memory>

#include "ember/nn.h"

using namespace ember;

struct Helper {
  int calls = 0;
};
#ifdef EMBER_FIXED
struct HelperModule : nn::Module {};
#endif

struct NetImpl : nn::Module {
  NetImpl() : nn::Module("Net") {
#ifdef EMBER_FIXED
    register_module("helper", std::make_shared<HelperModule>());
#else
    register_module("helper", std::make_shared<Helper>());
#endif
  }
};

int main() { return static_cast<int>(NetImpl().children().size()); }
