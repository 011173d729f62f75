#include "ember/nn/modules/activation.h"

#include <ostream>

#include "nn/modules/repr.h"

namespace ember::nn {

using detail::py_float;

GELUImpl::GELUImpl(const GELUOptions& options) : Module("GELU"), options(options) {
  if (options.approximate() != "none" && options.approximate() != "tanh") {
    throw ValueError("[GELU] approximate must be 'none' or 'tanh', got '" + options.approximate() +
                     "'");
  }
}

void GELUImpl::pretty_print(std::ostream& out) const {
  out << "GELU(approximate='" << options.approximate() << "')";
}

void SoftplusImpl::pretty_print(std::ostream& out) const {
  out << "Softplus(beta=" << py_float(options.beta())
      << ", threshold=" << py_float(options.threshold()) << ")";
}

void ELUImpl::pretty_print(std::ostream& out) const {
  out << "ELU(alpha=" << py_float(options.alpha()) << ")";
}

void LeakyReLUImpl::pretty_print(std::ostream& out) const {
  out << "LeakyReLU(negative_slope=" << py_float(options.negative_slope()) << ")";
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : Module("Hardtanh"), options(options) {
  if (options.min_val() > options.max_val()) {
    throw ValueError("[Hardtanh] min_val (" + py_float(options.min_val()) +
                     ") cannot be greater than max_val (" + py_float(options.max_val()) + ")");
  }
}

void HardtanhImpl::pretty_print(std::ostream& out) const {
  out << "Hardtanh(min_val=" << py_float(options.min_val())
      << ", max_val=" << py_float(options.max_val()) << ")";
}

void SoftmaxImpl::pretty_print(std::ostream& out) const {
  out << "Softmax(dim=" << options.dim() << ")";
}

void LogSoftmaxImpl::pretty_print(std::ostream& out) const {
  out << "LogSoftmax(dim=" << options.dim() << ")";
}

}  // namespace ember::nn
