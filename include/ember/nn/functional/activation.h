// Activations and attention (nn::functional).
#pragma once

#include "ember/tensor.h"
