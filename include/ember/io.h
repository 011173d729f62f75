// Files: safetensors, training checkpoints, and ember::save / ember::load.
#pragma once

#include "ember/io/checkpoint.h"
#include "ember/io/safetensors.h"
#include "ember/io/serialize.h"
