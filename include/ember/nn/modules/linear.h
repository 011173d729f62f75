// Linear, Identity, Flatten.
#pragma once

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

struct LinearOptions {
  LinearOptions(int64_t in_features, int64_t out_features)
      : in_features_(in_features), out_features_(out_features) {}
  EMBER_ARG(int64_t, in_features);
  EMBER_ARG(int64_t, out_features);
  EMBER_ARG(bool, bias) = true;
};

// y = x W^T + b. W (out, in) and b (out) start uniform on +-1/sqrt(in), as PyTorch.
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true)
      : LinearImpl(LinearOptions(in_features, out_features).bias(bias)) {}
  explicit LinearImpl(const LinearOptions& options);
  // x (*, in_features) -> (*, out_features)
  Tensor forward(const Tensor& x);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  LinearOptions options;
  Tensor weight;
  Tensor bias;
};
EMBER_MODULE(Linear);

class IdentityImpl : public Module {
 public:
  IdentityImpl() : Module("Identity") {}
  Tensor forward(const Tensor& x) { return x; }
};
EMBER_MODULE(Identity);

struct FlattenOptions {
  EMBER_ARG(int64_t, start_dim) = 1;
  EMBER_ARG(int64_t, end_dim) = -1;
};

// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : Module("Flatten"), options(options) {}
  Tensor forward(const Tensor& x) { return x.flatten(options.start_dim(), options.end_dim()); }
  void pretty_print(std::ostream& out) const override;

  FlattenOptions options;
};
EMBER_MODULE(Flatten);

}  // namespace ember::nn
