// The model zoo (ember::models): ready-made architectures built from ember's public nn modules,
// and checkpoints that carry their architecture, so a saved model loads without retyping it.
#pragma once

#include "ember/models/gpt2.h"
#include "ember/models/zoo.h"
