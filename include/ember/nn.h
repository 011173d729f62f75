// Neural-network modules (torch.nn): Module and the holder convention, layers, losses,
// initialisation, and nn::functional.
#pragma once

#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/norm.h"
#include "ember/nn/modules/transformer.h"
#include "ember/nn/utils.h"
