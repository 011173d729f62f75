// Mixed precision training: the forward pass under amp::autocast (float16 on a GPU, bfloat16 on
// the CPU) and, on a GPU, the loss scaled by amp::GradScaler so small float16 gradients survive.
#include <iostream>

#include <ember/ember.h>

int main() {
  using namespace ember;
  manual_seed(0);
  const bool gpu = cuda::is_available();
  const Device device = gpu ? Device(kCUDA, 0) : Device(kCPU);

  nn::Sequential model(nn::Linear(16, 32), nn::ReLU(), nn::Linear(32, 1));
  model->to(device);  // parameters stay float32; autocast casts per op
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.05));
  amp::GradScaler scaler(amp::GradScalerOptions().device(kCUDA).enabled(gpu));

  const Tensor x = randn({64, 16}).to(device);
  const Tensor y = x.sum({1}, /*keepdim=*/true).to(device) * 0.25;
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    opt.zero_grad();
    Tensor loss;
    {
      amp::autocast guard(device.type());  // matmuls in 16 bits
      loss = nn::functional::mse_loss(model(x).to(kFloat32), y);
    }
    scaler.scale(loss).backward();
    scaler.step(opt);  // unscales, skips the step on inf/NaN gradients
    scaler.update();
    (step == 0 ? first : last) = loss.item<double>();
  }
  std::cout << "loss " << first << " -> " << last << " on " << device.str() << " ("
            << dtype_name(amp::get_autocast_dtype(device.type())) << " autocast)\n";
  return last < first * 0.5 ? 0 : 1;
}
