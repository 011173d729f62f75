// nn modules: activation.
#pragma once

#include "ember/nn/module.h"
#include "ember/nn/options.h"
