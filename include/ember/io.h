// Files: safetensors and training checkpoints.
#pragma once

#include "ember/io/checkpoint.h"
#include "ember/io/safetensors.h"
