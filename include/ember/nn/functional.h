// nn::functional: the layers' math as free functions (torch.nn.functional), differentiable, on
// every device. `namespace F = ember::nn::functional;` reads as in libtorch.
#pragma once

#include "ember/nn/functional/activation.h"
#include "ember/nn/functional/conv.h"
#include "ember/nn/functional/loss.h"
#include "ember/nn/functional/norm.h"
