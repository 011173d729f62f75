// ember::save given something that has no tensors to save.
#include <string>

#include "ember/io.h"
#include "ember/nn.h"

using namespace ember;

int main() {
#ifdef EMBER_FIXED
  nn::Linear model(2, 2);
#else
  std::string model = "not a module";
#endif
  ember::save(model, "/nonexistent/model.safetensors");
  return 0;
}
