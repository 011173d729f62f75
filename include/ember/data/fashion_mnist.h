// Fashion-MNIST (Zalando): 60,000 training and 10,000 test images of 28x28 grey clothing, 10
// classes.
#pragma once

#include <string>
#include <vector>

#include "ember/data/dataset.h"
#include "ember/data/transforms.h"

namespace ember::data {

class FashionMNIST : public Dataset {
 public:
  // Where Debian's dataset-fashion-mnist package installs the four IDX files.
  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";

  // Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte (or the same with .gz) from `root`.
  // Samples: data float32 (1, 28, 28) in [0, 1] (then `transform`), target an int64 scalar.
  explicit FashionMNIST(std::string root = kDefaultRoot, bool train = true,
                        Transform transform = {});

  int64_t size() const override { return labels_.size(0); }
  Example get(int64_t index) const override;

  // The raw images, uint8 (N, 28, 28), and labels, int64 (N).
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return labels_; }
  // "T-shirt/top", "Trouser", ..., "Ankle boot": the name of each label.
  static const std::vector<std::string>& classes();

 private:
  Tensor images_, labels_;
  Transform transform_;
};

}  // namespace ember::data
