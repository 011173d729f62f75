#include "ember/nn/modules/loss.h"

namespace ember::nn {

namespace F = functional;

namespace {

// Registers a defined weight as a buffer and points the options at it (so to() moves it).
void register_weight(Module& m, const char* name, Tensor& option) {
  if (option.defined()) option = m.register_buffer(name, option);
}

}  // namespace

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : Module("CrossEntropyLoss"), options(options) {
  register_weight(*this, "weight", this->options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target, options);
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : Module("NLLLoss"), options(options) {
  register_weight(*this, "weight", this->options.weight());
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::nll_loss(input, target, options);
}

MSELossImpl::MSELossImpl(const MSELossOptions& options) : Module("MSELoss"), options(options) {}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, options);
}

L1LossImpl::L1LossImpl(const L1LossOptions& options) : Module("L1Loss"), options(options) {}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::l1_loss(input, target, options);
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options)
    : Module("SmoothL1Loss"), options(options) {}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::smooth_l1_loss(input, target, options);
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options)
    : Module("HuberLoss"), options(options) {}

Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::huber_loss(input, target, options);
}

BCELossImpl::BCELossImpl(const BCELossOptions& options) : Module("BCELoss"), options(options) {
  register_weight(*this, "weight", this->options.weight());
}

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy(input, target, options);
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : Module("BCEWithLogitsLoss"), options(options) {
  register_weight(*this, "weight", this->options.weight());
  register_weight(*this, "pos_weight", this->options.pos_weight());
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::binary_cross_entropy_with_logits(input, target, options);
}

KLDivLossImpl::KLDivLossImpl(const KLDivLossOptions& options)
    : Module("KLDivLoss"), options(options) {}

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::kl_div(input, target, options);
}

}  // namespace ember::nn
