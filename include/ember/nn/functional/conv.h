// Convolution and pooling (nn::functional): conv1d, conv2d, conv_transpose2d, max_pool2d, avg_pool2d, adaptive_avg_pool2d.
#pragma once

#include "ember/tensor.h"
