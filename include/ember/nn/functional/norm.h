// Normalisation, dropout and embedding (nn::functional).
#pragma once

#include "ember/tensor.h"
