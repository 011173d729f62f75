// The C++ element type of every dtype, as an X-macro for the explicit instantiations of
// per-type templates (Tensor::data_ptr<T>, to_vector<T>, tensor<T>, ...).
#pragma once

#include <cstdint>

#include "ember/half.h"

// Applies X to bool, uint8_t, int8_t, int32_t, int64_t, Half, BFloat16, float and double.
#define EMBER_FOR_EACH_ELEMENT_TYPE(X) \
  X(bool) X(uint8_t) X(int8_t) X(int32_t) X(int64_t) X(Half) X(BFloat16) X(float) X(double)
