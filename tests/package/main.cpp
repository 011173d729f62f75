// The consumer's program: what an outside project does first with ember. Adds two tensors (with
// broadcasting) and checks every value, catches ember's typed exception across the library
// boundary, trains a linear layer one step, and runs a product on the GPU when one is usable.
#include <cstdio>
#include <string>
#include <vector>

#include <ember/ember.h>

namespace {

int fail(const char* what) {
  std::fprintf(stderr, "ember_consumer: %s\n", what);
  return 1;
}

}  // namespace

int main() {
  ember::Tensor a = ember::tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  ember::Tensor b = ember::tensor(std::vector<float>{10, 20, 30}, {3});
  ember::Tensor c = a + b;
  const std::vector<float> expected = {11, 22, 33, 14, 25, 36};
  if (c.dtype() != ember::kFloat32 || c.sizes() != ember::Shape{2, 3}) {
    return fail("wrong dtype or shape");
  }
  if (c.to_vector<float>() != expected) return fail("a + b gave wrong values");

  // A shape error is an ember::Error the caller can catch by type.
  bool caught = false;
  try {
    (void)ember::matmul(a, a);
  } catch (const ember::Error& e) {
    caught = std::string(e.what()).find("matmul") != std::string::npos;
  }
  if (!caught) return fail("matmul of (2, 3) by (2, 3) did not raise ember::Error naming it");

  // One SGD step lowers the loss of a linear layer.
  ember::manual_seed(0);
  ember::nn::Linear layer(3, 1);
  ember::optim::SGD opt(layer->parameters(), ember::optim::SGDOptions(0.005));
  ember::Tensor target = ember::ones({2, 1});
  ember::Tensor loss0 = ember::nn::functional::mse_loss(layer->forward(a), target);
  opt.zero_grad();
  loss0.backward();
  opt.step();
  ember::Tensor loss1 = ember::nn::functional::mse_loss(layer->forward(a), target);
  if (!(loss1.item<float>() < loss0.item<float>()))
    return fail("an SGD step did not lower the loss");

  const char* where = "cpu";
  if (ember::cuda::is_available()) {
    ember::Tensor g = ember::matmul(a.to(ember::Device("cuda")), a.t().to(ember::Device("cuda")));
    ember::Tensor h = ember::matmul(a, a.t());
    if (!ember::allclose(g.to(ember::Device("cpu")), h)) return fail("the GPU product differs");
    where = "cpu and cuda";
  }
  std::printf("ember %s: a + b, exceptions, an SGD step ok on %s\n", ember::kVersion, where);
  return 0;
}
