// Optimizers and learning-rate schedulers (torch.optim).
#pragma once

#include "ember/optim/optimizer.h"
