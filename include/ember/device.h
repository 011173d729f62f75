// Where a tensor lives: the CPU or one CUDA device.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace ember {

enum class DeviceType : int8_t { CPU, CUDA };
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

class Device {
 public:
  // index -1 means "the current device" (CUDA) or "the one CPU"; tensors always carry a concrete
  // CUDA index.
  Device(DeviceType type = kCPU, int index = -1) : type_(type), index_(static_cast<int8_t>(index)) {
    if (index < -1 || index > 127 || (type == kCPU && index > 0)) [[unlikely]] {
      bad_index(type, index);
    }
    if (type == kCPU) index_ = -1;
  }
  // Parses "cpu", "cuda", "cuda:N"; throws ember::Error on anything else.
  Device(std::string_view spec);
  Device(const char* spec) : Device(std::string_view(spec)) {}
  Device(const std::string& spec) : Device(std::string_view(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  // "cpu", "cuda", "cuda:0"
  std::string str() const;

  friend bool operator==(const Device& a, const Device& b) {
    return a.type_ == b.type_ && a.index_ == b.index_;
  }
  friend bool operator!=(const Device& a, const Device& b) { return !(a == b); }

 private:
  [[noreturn]] static void bad_index(DeviceType type, int index);
  DeviceType type_;
  int8_t index_;
};

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace ember
