// Fashion-MNIST from its four IDX files.
#include "ember/data/fashion_mnist.h"

#include <filesystem>
#include <string>

#include "ember/data/idx.h"
#include "ember/error.h"
#include "ember/ops.h"

namespace ember::data {

namespace {

constexpr int64_t kSide = 28;

// `dir/name`, or `dir/name.gz` when only the compressed file exists.
std::string locate(const std::string& root, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path plain = fs::path(root) / name;
  std::error_code ec;
  if (fs::is_regular_file(plain, ec)) return plain.string();
  fs::path gz = plain;
  gz += ".gz";
  if (fs::is_regular_file(gz, ec)) return gz.string();
  throw Error("[FashionMNIST] " + name + "(.gz) not found in " + root +
              ": install Debian's dataset-fashion-mnist package (apt-get install "
              "dataset-fashion-mnist, which puts the files in " +
              FashionMNIST::kDefaultRoot + ") or pass the directory holding the four IDX files");
}

}  // namespace

FashionMNIST::FashionMNIST(std::string root, bool train, Transform transform)
    : transform_(std::move(transform)) {
  const std::string prefix = train ? "train" : "t10k";
  const std::string image_path = locate(root, prefix + "-images-idx3-ubyte");
  const std::string label_path = locate(root, prefix + "-labels-idx1-ubyte");
  images_ = read_idx(image_path);
  Tensor labels = read_idx(label_path);
  if (images_.dtype() != kUInt8 || images_.dim() != 3 || images_.size(1) != kSide ||
      images_.size(2) != kSide) {
    throw Error("[FashionMNIST] " + image_path + ": expected uint8 images (N, 28, 28)");
  }
  if (labels.dtype() != kUInt8 || labels.dim() != 1) {
    throw Error("[FashionMNIST] " + label_path + ": expected uint8 labels (N)");
  }
  if (labels.size(0) != images_.size(0)) {
    throw Error("[FashionMNIST] " + image_path + " holds " + std::to_string(images_.size(0)) +
                " images but " + label_path + " " + std::to_string(labels.size(0)) + " labels");
  }
  const uint8_t* l = labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < labels.size(0); ++i) {
    if (l[i] >= classes().size()) {
      throw Error("[FashionMNIST] " + label_path + ": label " + std::to_string(l[i]) +
                  " at index " + std::to_string(i) + " is not a class (0..9)");
    }
  }
  labels_ = labels.to(kInt64);
}

Example FashionMNIST::get(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw IndexError("[FashionMNIST] index " + std::to_string(index) +
                     " is out of range for a dataset of size " + std::to_string(size()));
  }
  // uint8 -> float32 / 255, as torchvision's ToTensor.
  Tensor image = empty({1, kSide, kSide}, TensorOptions(kFloat32));
  const uint8_t* src = images_.data_ptr<uint8_t>() + index * kSide * kSide;
  float* dst = image.data_ptr<float>();
  for (int64_t i = 0; i < kSide * kSide; ++i) dst[i] = static_cast<float>(src[i]) / 255.0f;
  Tensor target = scalar_tensor(labels_.data_ptr<int64_t>()[index], TensorOptions(kInt64));
  return {transform_ ? transform_(image) : image, target};
}

const std::vector<std::string>& FashionMNIST::classes() {
  static const std::vector<std::string> names = {"T-shirt/top", "Trouser",   "Pullover", "Dress",
                                                 "Coat",        "Sandal",    "Shirt",    "Sneaker",
                                                 "Bag",         "Ankle boot"};
  return names;
}

}  // namespace ember::data
