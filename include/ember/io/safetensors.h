// safetensors read and write.
#pragma once

#include "ember/tensor.h"
