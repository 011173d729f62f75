// Data loading: datasets, the IDX reader and Fashion-MNIST, transforms, samplers, DataLoader.
#pragma once

#include "ember/data/dataloader.h"
#include "ember/data/dataset.h"
#include "ember/data/fashion_mnist.h"
#include "ember/data/idx.h"
#include "ember/data/sampler.h"
#include "ember/data/transforms.h"
