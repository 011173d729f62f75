// A module whose forward takes two tensors, put into a Sequential.
#include "ember/nn.h"

using namespace ember;

struct PairImpl : nn::Module {
  PairImpl() : nn::Module("Pair") {}
#ifdef EMBER_FIXED
  Tensor forward(const Tensor& a) { return a; }
#else
  Tensor forward(const Tensor& a, const Tensor& b) { return a + b; }
#endif
};
EMBER_MODULE(Pair);

int main() {
  nn::Sequential net(nn::Linear(4, 4), Pair());
  return static_cast<int>(net->size());
}
