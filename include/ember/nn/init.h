// Parameter initialisation (torch.nn.init): in place, outside the graph, on any device.
#pragma once

#include <string>
#include <utility>

#include "ember/tensor.h"

namespace ember::nn::init {

// PyTorch's nonlinearity names: "linear", "conv1d", "conv2d", "sigmoid", "tanh", "relu",
// "leaky_relu" (param: negative slope, default 0.01), "selu".
double calculate_gain(const std::string& nonlinearity, double param = -1);
// (fan_in, fan_out) of a weight of at least 2 dims: (size(1), size(0)) times the receptive field.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor& uniform_(Tensor& tensor, double a = 0.0, double b = 1.0);
Tensor& normal_(Tensor& tensor, double mean = 0.0, double std = 1.0);
Tensor& constant_(Tensor& tensor, double value);
Tensor& zeros_(Tensor& tensor);
Tensor& ones_(Tensor& tensor);
// mode "fan_in" or "fan_out"; a is the negative slope for leaky_relu.
Tensor& kaiming_uniform_(Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                         const std::string& nonlinearity = "leaky_relu");
Tensor& kaiming_normal_(Tensor& tensor, double a = 0.0, const std::string& mode = "fan_in",
                        const std::string& nonlinearity = "leaky_relu");
Tensor& xavier_uniform_(Tensor& tensor, double gain = 1.0);
Tensor& xavier_normal_(Tensor& tensor, double gain = 1.0);
// Normal(mean, std) redrawn until inside [a, b] (by inverse CDF, as PyTorch).
Tensor& trunc_normal_(Tensor& tensor, double mean = 0.0, double std = 1.0, double a = -2.0,
                      double b = 2.0);

}  // namespace ember::nn::init
