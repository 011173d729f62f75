// Shape: a small inline vector of sizes (also used for strides); no heap allocation up to 6 dims.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

namespace ember {

class Shape {
 public:
  static constexpr int kInline = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }
  template <class It>
  Shape(It first, It last) {
    assign(first, last);
  }
  explicit Shape(size_t n, int64_t value = 0) { resize(n, value); }
  Shape(const Shape& o) { assign(o.begin(), o.end()); }
  Shape(Shape&& o) noexcept { steal(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Shape() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return heap_ ? heap_ : inline_; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }
  int64_t front() const { return data()[0]; }

  void push_back(int64_t v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    reserve(size_ + 1);
    int64_t* d = data();
    for (size_t i = size_; i > pos; --i) d[i] = d[i - 1];
    d[pos] = v;
    ++size_;
  }
  void erase(size_t pos) {
    int64_t* d = data();
    for (size_t i = pos; i + 1 < size_; ++i) d[i] = d[i + 1];
    --size_;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity()) return;
    size_t cap = std::max(n, capacity() * 2);
    int64_t* p = new int64_t[cap];
    std::copy(begin(), end(), p);
    delete[] heap_;
    heap_ = p;
    cap_ = cap;
  }

  // Product of all sizes (1 for a 0-dim shape).
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t v : *this) n *= v;
    return n;
  }
  std::vector<int64_t> vec() const { return std::vector<int64_t>(begin(), end()); }

  friend bool operator==(const Shape& a, const Shape& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const Shape& a, const Shape& b) { return !(a == b); }

 private:
  size_t capacity() const { return heap_ ? cap_ : kInline; }
  template <class It>
  void assign(It first, It last) {
    size_ = 0;
    size_t n = static_cast<size_t>(std::distance(first, last));
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  void steal(Shape& o) {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    o.size_ = 0;
  }
  void release() {
    delete[] heap_;
    heap_ = nullptr;
  }

  int64_t inline_[kInline];
  int64_t* heap_ = nullptr;
  size_t cap_ = 0;
  size_t size_ = 0;
};

// "[2, 3]"
std::ostream& operator<<(std::ostream& os, const Shape& s);

}  // namespace ember
