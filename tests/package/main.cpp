// The consumer's program: builds two tensors, adds them (with broadcasting) and checks every value.
#include <cstdio>
#include <vector>

#include <ember/ember.h>

int main() {
  ember::Tensor a = ember::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  ember::Tensor b = ember::tensor(std::vector<float>{10, 20, 30}, {3});
  ember::Tensor c = a + b;

  const std::vector<float> expected = {11, 22, 33, 14, 25, 36};
  if (c.dtype() != ember::kFloat32 || c.sizes() != ember::Shape{2, 3}) {
    std::fprintf(stderr, "ember_consumer: wrong dtype or shape\n");
    return 1;
  }
  const std::vector<float> got = c.to_vector<float>();
  if (got != expected) {
    std::fprintf(stderr, "ember_consumer: a + b gave wrong values\n");
    return 1;
  }
  std::printf("ember %s: a + b ok\n", ember::kVersion);
  return 0;
}
