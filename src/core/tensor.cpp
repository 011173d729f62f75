// Tensor metadata, element access and conversions to host values.
#include <cstring>

#include "core/dispatch.h"
#include "ember/ops.h"
#include "ops/op_utils.h"

namespace ember {

void TensorImpl::refresh() {
  numel = sizes.numel();
  int64_t expected = 1;
  contiguous = true;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) {
      contiguous = false;
      break;
    }
    expected *= sizes[i];
  }
}

void Tensor::throw_undefined() {
  throw Error("[Tensor] the tensor is undefined (default-constructed)");
}

int64_t Tensor::size(int64_t dim) const { return impl().sizes[wrap_dim("size", dim, this->dim())]; }

int64_t Tensor::stride(int64_t dim) const {
  return impl().strides[wrap_dim("stride", dim, this->dim())];
}

void* Tensor::data_ptr() const {
  const TensorImpl& i = impl();
  if (!i.storage) return nullptr;
  return static_cast<char*>(i.storage->data()) + i.offset * static_cast<int64_t>(element_size());
}

template <class T>
T* Tensor::data_ptr() const {
  if (dtype_of_v<T> != dtype()) {
    throw TypeError("[data_ptr] expected a tensor of dtype " +
                    std::string(dtype_name(dtype_of_v<T>)) + " but it has dtype " +
                    std::string(dtype_name(dtype())));
  }
  return static_cast<T*>(data_ptr());
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  Tensor host = to(Device(kCPU), dtype_of_v<T>).contiguous();
  const T* p = host.data_ptr<T>();
  return std::vector<T>(p, p + host.numel());
}

template <class T>
T Tensor::item() const {
  if (numel() != 1) {
    throw ValueError("[item] a tensor with " + std::to_string(numel()) +
                     " elements cannot be converted to a scalar");
  }
  return to_vector<T>()[0];
}

Scalar Tensor::item() const {
  if (dtype() == kBool) return Scalar(item<bool>());
  if (is_integral(dtype())) return Scalar(item<int64_t>());
  return Scalar(item<double>());
}

#define EMBER_INSTANTIATE(T)                            \
  template T* Tensor::data_ptr<T>() const;              \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
EMBER_INSTANTIATE(bool)
EMBER_INSTANTIATE(uint8_t)
EMBER_INSTANTIATE(int8_t)
EMBER_INSTANTIATE(int32_t)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(Half)
EMBER_INSTANTIATE(BFloat16)
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(double)
#undef EMBER_INSTANTIATE

}  // namespace ember
