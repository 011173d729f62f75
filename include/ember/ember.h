// ember: tensors on the CPU or CUDA devices, with PyTorch's names. The one header to include.
#pragma once

#include "ember/autograd.h"
#include "ember/cuda.h"
#include "ember/data.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/half.h"
#include "ember/ops.h"
#include "ember/parallel.h"
#include "ember/random.h"
#include "ember/scalar.h"
#include "ember/shape.h"
#include "ember/storage.h"
#include "ember/tensor.h"
#include "ember/version.h"
