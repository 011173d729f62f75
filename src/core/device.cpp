// Device parsing and printing.
#include "ember/device.h"

#include <charconv>

#include "ember/error.h"

namespace ember {

void Device::bad_index(DeviceType type, int index) {
  if (index < -1 || index > 127) {
    throw Error("[Device] device index must be -1 or in [0, 127], got " + std::to_string(index));
  }
  (void)type;  // only the CPU restricts the index further
  throw Error("[Device] the CPU device index must be -1 or 0, got " + std::to_string(index));
}

Device::Device(std::string_view spec) : type_(kCPU), index_(-1) {
  auto bad = [&]() {
    return Error("[Device] invalid device string '" + std::string(spec) +
                 "': expected 'cpu', 'cuda' or 'cuda:N' with N a device index");
  };
  std::string_view name = spec;
  std::string_view idx;
  bool has_idx = false;
  if (auto colon = spec.find(':'); colon != std::string_view::npos) {
    name = spec.substr(0, colon);
    idx = spec.substr(colon + 1);
    has_idx = true;
  }
  if (name == "cpu") {
    type_ = kCPU;
  } else if (name == "cuda") {
    type_ = kCUDA;
  } else {
    throw bad();
  }
  if (has_idx) {
    int value = -1;
    auto [ptr, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), value);
    if (idx.empty() || ec != std::errc() || ptr != idx.data() + idx.size() || value < 0 ||
        value > 127 || (idx.size() > 1 && idx[0] == '0')) {
      throw bad();
    }
    if (type_ == kCPU && value != 0) throw bad();
    index_ = static_cast<int8_t>(type_ == kCPU ? -1 : value);
  }
}

std::string Device::str() const {
  if (type_ == kCPU) return "cpu";
  return index_ < 0 ? std::string("cuda") : "cuda:" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace ember
