// Exceptions. Every message starts with "[op] " and names the shapes, dtypes or devices involved.
#pragma once

#include <stdexcept>
#include <string>

namespace ember {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// An index or dim out of range (PyTorch's IndexError).
class IndexError : public Error {
 public:
  using Error::Error;
};
// A bad value: negative size, wrong shape (PyTorch's ValueError / RuntimeError).
class ValueError : public Error {
 public:
  using Error::Error;
};
// A dtype the op does not accept (PyTorch's TypeError).
class TypeError : public Error {
 public:
  using Error::Error;
};
// An op with no kernel for this backend or dtype.
class NotImplementedError : public Error {
 public:
  using Error::Error;
};
// A device allocator could not satisfy a request even after freeing its cache.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

}  // namespace ember
