// nn::utils: gradient clipping.
#pragma once

#include "ember/tensor.h"
