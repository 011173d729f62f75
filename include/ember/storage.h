// Storage: a reference-counted block of device memory, and the allocator interface behind it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "ember/device.h"

namespace ember {

// Owns one allocation; frees it through its deleter when destroyed. Move-only.
class DataPtr {
 public:
  using Deleter = void (*)(void* data, void* ctx);
  DataPtr() = default;
  DataPtr(void* data, void* ctx, Deleter deleter, Device device)
      : data_(data), ctx_(ctx), deleter_(deleter), device_(device) {}
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  DataPtr(DataPtr&& o) noexcept { *this = std::move(o); }
  DataPtr& operator=(DataPtr&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      ctx_ = std::exchange(o.ctx_, nullptr);
      deleter_ = std::exchange(o.deleter_, nullptr);
      device_ = o.device_;
    }
    return *this;
  }
  ~DataPtr() { reset(); }

  void* get() const { return data_; }
  void* context() const { return ctx_; }
  Device device() const { return device_; }
  void reset() {
    if (deleter_) deleter_(data_, ctx_);
    data_ = nullptr;
    ctx_ = nullptr;
    deleter_ = nullptr;
  }

 private:
  void* data_ = nullptr;
  void* ctx_ = nullptr;
  Deleter deleter_ = nullptr;
  Device device_;
};

// Hands out memory of one device. Backends own their allocators.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
};

// The memory behind one or more tensors (views share it).
class StorageImpl {
 public:
  StorageImpl(DataPtr data, size_t nbytes) : data_(std::move(data)), nbytes_(nbytes) {}
  void* data() const { return data_.get(); }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return data_.device(); }
  const DataPtr& data_ptr() const { return data_; }
  // Bumped by every in-place write through any view of this storage (autograd's version counter).
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  DataPtr data_;
  size_t nbytes_;
  std::atomic<uint32_t> version_{0};
};

using Storage = std::shared_ptr<StorageImpl>;

}  // namespace ember
