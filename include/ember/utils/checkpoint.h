// Gradient checkpointing (torch.utils.checkpoint).
#pragma once

#include "ember/tensor.h"
