#include "ember/nn/modules/linear.h"

#include <cmath>
#include <ostream>
#include <sstream>

#include "ember/nn/init.h"
#include "ember/ops.h"

namespace ember::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : Module("Linear"), options(options) {
  if (options.in_features() < 0 || options.out_features() < 0) {
    throw ValueError("[Linear] in_features and out_features must be non-negative, got " +
                     std::to_string(options.in_features()) + " and " +
                     std::to_string(options.out_features()));
  }
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  // kaiming_uniform_(a = sqrt(5)) gives bound 1/sqrt(fan_in), as does the bias.
  if (options.in_features() == 0) return;  // nothing to draw from (PyTorch warns)
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(options.in_features()));
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& x) {
  if (x.dim() == 0 || x.size(-1) != options.in_features()) {
    std::ostringstream m;
    m << "[Linear(in_features=" << options.in_features()
      << ", out_features=" << options.out_features() << ")] input of shape " << x.sizes();
    if (x.dim() == 0) {
      m << " has no feature dim";
    } else {
      m << " has " << x.size(-1) << " features, expected " << options.in_features();
    }
    throw ValueError(m.str());
  }
  return linear(x, weight, bias);
}

void LinearImpl::pretty_print(std::ostream& out) const {
  out << "Linear(in_features=" << options.in_features()
      << ", out_features=" << options.out_features()
      << ", bias=" << (options.bias() ? "True" : "False") << ")";
}

void FlattenImpl::pretty_print(std::ostream& out) const {
  out << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

}  // namespace ember::nn
