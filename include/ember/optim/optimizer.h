// Optimizer base, SGD, Adam, AdamW, RMSprop, Adagrad.
#pragma once

#include "ember/tensor.h"
