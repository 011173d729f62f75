// Activation modules: ReLU, GELU, SiLU, Sigmoid, Tanh, Softplus, ELU, LeakyReLU, Hardtanh,
// ReLU6, Mish, Softmax, LogSoftmax. Each forward is the nn::functional op; printing is PyTorch's.
#pragma once

#include <string>

#include "ember/nn/functional/activation.h"
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

// A module without options whose forward is one function.
#define EMBER_PLAIN_ACTIVATION(Name, fn)              \
  class Name##Impl : public Module {                  \
   public:                                            \
    Name##Impl() : Module(#Name) {}                   \
    Tensor forward(const Tensor& x) { return fn(x); } \
  };                                                  \
  EMBER_MODULE(Name)

EMBER_PLAIN_ACTIVATION(ReLU, functional::relu);
EMBER_PLAIN_ACTIVATION(SiLU, functional::silu);
EMBER_PLAIN_ACTIVATION(Sigmoid, functional::sigmoid);
EMBER_PLAIN_ACTIVATION(Tanh, functional::tanh);
EMBER_PLAIN_ACTIVATION(ReLU6, functional::relu6);
EMBER_PLAIN_ACTIVATION(Mish, functional::mish);
#undef EMBER_PLAIN_ACTIVATION

struct GELUOptions {
  // "none" (exact, erf) or "tanh".
  EMBER_ARG(std::string, approximate) = "none";
};

class GELUImpl : public Module {
 public:
  explicit GELUImpl(const GELUOptions& options = {});
  Tensor forward(const Tensor& x) { return functional::gelu(x, options.approximate()); }
  void pretty_print(std::ostream& out) const override;

  GELUOptions options;
};
EMBER_MODULE(GELU);

struct SoftplusOptions {
  EMBER_ARG(double, beta) = 1.0;
  // Above threshold (of beta * x) the result is x.
  EMBER_ARG(double, threshold) = 20.0;
};

class SoftplusImpl : public Module {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {})
      : Module("Softplus"), options(options) {}
  Tensor forward(const Tensor& x) {
    return functional::softplus(x, options.beta(), options.threshold());
  }
  void pretty_print(std::ostream& out) const override;

  SoftplusOptions options;
};
EMBER_MODULE(Softplus);

struct ELUOptions {
  EMBER_ARG(double, alpha) = 1.0;
};

class ELUImpl : public Module {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : Module("ELU"), options(options) {}
  Tensor forward(const Tensor& x) { return functional::elu(x, options.alpha()); }
  void pretty_print(std::ostream& out) const override;

  ELUOptions options;
};
EMBER_MODULE(ELU);

struct LeakyReLUOptions {
  EMBER_ARG(double, negative_slope) = 0.01;
};

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {})
      : Module("LeakyReLU"), options(options) {}
  Tensor forward(const Tensor& x) { return functional::leaky_relu(x, options.negative_slope()); }
  void pretty_print(std::ostream& out) const override;

  LeakyReLUOptions options;
};
EMBER_MODULE(LeakyReLU);

struct HardtanhOptions {
  EMBER_ARG(double, min_val) = -1.0;
  EMBER_ARG(double, max_val) = 1.0;
};

class HardtanhImpl : public Module {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  Tensor forward(const Tensor& x) {
    return functional::hardtanh(x, options.min_val(), options.max_val());
  }
  void pretty_print(std::ostream& out) const override;

  HardtanhOptions options;
};
EMBER_MODULE(Hardtanh);

struct SoftmaxOptions {
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT: implicit, nn::Softmax(1)
  EMBER_ARG(int64_t, dim);
};

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(const SoftmaxOptions& options) : Module("Softmax"), options(options) {}
  explicit SoftmaxImpl(int64_t dim) : SoftmaxImpl(SoftmaxOptions(dim)) {}
  Tensor forward(const Tensor& x) { return functional::softmax(x, options.dim()); }
  void pretty_print(std::ostream& out) const override;

  SoftmaxOptions options;
};
EMBER_MODULE(Softmax);

using LogSoftmaxOptions = SoftmaxOptions;

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options)
      : Module("LogSoftmax"), options(options) {}
  explicit LogSoftmaxImpl(int64_t dim) : LogSoftmaxImpl(LogSoftmaxOptions(dim)) {}
  Tensor forward(const Tensor& x) { return functional::log_softmax(x, options.dim()); }
  void pretty_print(std::ostream& out) const override;

  LogSoftmaxOptions options;
};
EMBER_MODULE(LogSoftmax);

}  // namespace ember::nn
