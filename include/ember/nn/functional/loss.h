// Losses (nn::functional).
#pragma once

#include "ember/tensor.h"
