// Tensor metadata and typed data pointers; the methods that need a kernel (to_vector, item, and
// every op) are defined by the op layer (src/ops/).
#include "core/element_types.h"
#include "core/tensor_util.h"

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

#define EMBER_INSTANTIATE(T) template T* Tensor::data_ptr<T>() const;
EMBER_FOR_EACH_ELEMENT_TYPE(EMBER_INSTANTIATE)
#undef EMBER_INSTANTIATE

}  // namespace ember
