// Moving a model and its data to a device, running it there, and bringing the result back.
#include <iostream>

#include <ember/ember.h>

int main() {
  using namespace ember;
  manual_seed(0);
  const Device device = cuda::is_available() ? Device(kCUDA, 0) : Device(kCPU);

  nn::Sequential model(nn::Linear(8, 16), nn::ReLU(), nn::Linear(16, 4));
  model->to(device);  // moves every parameter and buffer in place
  const Tensor x = randn({5, 8}).to(device);

  Tensor y;
  {
    InferenceMode guard;  // no autograd graph while predicting
    y = model(x);
  }
  const Tensor on_host = y.cpu();  // copies back to the CPU
  std::cout << "model on " << model->parameters()[0].device().str() << ", output "
            << on_host.sizes() << " on " << on_host.device().str() << "\n";
  // The same model on the CPU gives the same numbers.
  model->to(Device(kCPU));
  const double diff = (model(x.cpu()) - on_host).abs().max().item<double>();
  std::cout << "max difference CPU vs " << device.str() << ": " << diff << "\n";
  return diff < 1e-4 ? 0 : 1;
}
