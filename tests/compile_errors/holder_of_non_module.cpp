// EMBER_MODULE(Name) over a NameImpl that does not derive from nn::Module.
#include "ember/nn.h"

using namespace ember;

#ifdef EMBER_FIXED
struct HeadImpl : nn::Module {
#else
struct HeadImpl {
#endif
  Tensor forward(const Tensor& x) { return x; }
};
EMBER_MODULE(Head);

int main() {
  Head head;
  return static_cast<int>(head->forward(ones({2})).numel());
}
