// utils: gradient checkpointing.
#pragma once

#include "ember/utils/checkpoint.h"
