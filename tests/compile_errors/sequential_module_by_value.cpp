// A module object (not a holder or shared_ptr) pushed into a Sequential.
#include "ember/nn.h"

using namespace ember;

int main() {
  nn::Sequential net;
#ifdef EMBER_FIXED
  net->push_back(nn::Linear(4, 4));
#else
  nn::LinearImpl layer(4, 4);
  net->push_back(layer);
#endif
  return static_cast<int>(net->size());
}
