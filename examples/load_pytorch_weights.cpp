// Loading weights trained in PyTorch: the same architecture built in ember loads the state dict
// that safetensors.torch.save_file wrote, and gives PyTorch's outputs (data/make_pytorch_mlp.py
// made the files).
#include <iostream>
#include <string>

#include <ember/ember.h>

int main(int argc, char** argv) {
  using namespace ember;
  const std::string dir = argc > 1 ? argv[1] : "data";
  // torch.nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)): the same names "0.weight", ...
  nn::Sequential model(nn::Linear(4, 8), nn::ReLU(), nn::Linear(8, 3));
  ember::load(model, dir + "/pytorch_mlp.safetensors");
  model->eval();

  TensorDict io;
  ember::load(io, dir + "/pytorch_mlp_io.safetensors");
  Tensor y;
  {
    InferenceMode guard;
    y = model(io["x"]);
  }
  const double diff = (y - io["y"]).abs().max().item<double>();
  std::cout << "max |ember - PyTorch| = " << diff << "\n";
  return diff < 1e-5 ? 0 : 1;
}
