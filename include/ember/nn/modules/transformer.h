// nn modules: transformer.
#pragma once

#include "ember/nn/module.h"
#include "ember/nn/options.h"
