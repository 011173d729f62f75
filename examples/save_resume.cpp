// Checkpoint and resume: train a few steps, save model and optimizer, build them again, load,
// and check the resumed run continues exactly where the first one stopped.
#include <cstdio>
#include <iostream>
#include <string>

#include <ember/ember.h>

using namespace ember;

namespace {

nn::Sequential make_model() {
  return nn::Sequential(nn::Linear(4, 8), nn::Tanh(), nn::Linear(8, 1));
}

// One step of full-batch regression; returns the loss.
double train_step(nn::Sequential& model, optim::Optimizer& opt, const Tensor& x, const Tensor& y) {
  opt.zero_grad();
  Tensor loss = nn::functional::mse_loss(model(x), y);
  loss.backward();
  opt.step();
  return loss.item<double>();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  manual_seed(0);
  const Tensor x = randn({32, 4});
  const Tensor y = x.sum({1}, /*keepdim=*/true).sin();

  nn::Sequential model = make_model();
  optim::Adam opt(model->parameters(), optim::AdamOptions(1e-2));
  for (int step = 0; step < 5; ++step) train_step(model, opt, x, y);
  ember::save(model, dir + "/model.safetensors");
  ember::save(opt, dir + "/optimizer.safetensors");
  const double next = train_step(model, opt, x, y);  // what step 6 gives without a restart

  // A new process would start here: same architecture, fresh weights, then load.
  nn::Sequential resumed = make_model();
  optim::Adam resumed_opt(resumed->parameters(), optim::AdamOptions(1e-2));
  ember::load(resumed, dir + "/model.safetensors");
  ember::load(resumed_opt, dir + "/optimizer.safetensors");
  const double resumed_next = train_step(resumed, resumed_opt, x, y);

  std::cout << "step 6 loss: " << next << " (uninterrupted), " << resumed_next << " (resumed)\n";
  std::remove((dir + "/model.safetensors").c_str());
  std::remove((dir + "/optimizer.safetensors").c_str());
  return next == resumed_next ? 0 : 1;
}
