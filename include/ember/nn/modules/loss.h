// Loss modules: forward(input, target) is the nn::functional loss with the module's options.
// Weight tensors given in the options are registered as buffers (PyTorch's "weight" and
// "pos_weight"), so they follow to() and appear in state_dict.
//   nn::CrossEntropyLoss criterion(nn::CrossEntropyLossOptions().label_smoothing(0.1));
//   Tensor loss = criterion(logits, target);
#pragma once

#include "ember/nn/functional/loss.h"
#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

class CrossEntropyLossImpl : public Module {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  CrossEntropyLossOptions options;
};
EMBER_MODULE(CrossEntropyLoss);

class NLLLossImpl : public Module {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  NLLLossOptions options;
};
EMBER_MODULE(NLLLoss);

class MSELossImpl : public Module {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  MSELossOptions options;
};
EMBER_MODULE(MSELoss);

class L1LossImpl : public Module {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  L1LossOptions options;
};
EMBER_MODULE(L1Loss);

class SmoothL1LossImpl : public Module {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  SmoothL1LossOptions options;
};
EMBER_MODULE(SmoothL1Loss);

class HuberLossImpl : public Module {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  HuberLossOptions options;
};
EMBER_MODULE(HuberLoss);

class BCELossImpl : public Module {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  BCELossOptions options;
};
EMBER_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Module {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  BCEWithLogitsLossOptions options;
};
EMBER_MODULE(BCEWithLogitsLoss);

class KLDivLossImpl : public Module {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {});
  Tensor forward(const Tensor& input, const Tensor& target);

  KLDivLossOptions options;
};
EMBER_MODULE(KLDivLoss);

}  // namespace ember::nn
