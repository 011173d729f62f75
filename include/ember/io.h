// Files: safetensors and training checkpoints.
#pragma once

#include "ember/io/safetensors.h"
