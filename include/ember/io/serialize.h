// ember::save / ember::load: libtorch's torch::save / torch::load, with safetensors files
// underneath (PyTorch reads them with safetensors.torch.load_file, and ember loads what
// safetensors.torch.save_file wrote).
//
//   ember::save(model, "model.safetensors");       // a module: its state_dict()
//   ember::load(model, "model.safetensors");       // names, shapes and dtypes must match
//   ember::save(optimizer, "optim.safetensors");   ember::load(optimizer, "optim.safetensors");
//   ember::save(tensor, "t.safetensors");          Tensor t; ember::load(t, "t.safetensors");
//   ember::save(std::vector<Tensor>{a, b}, "ab.safetensors");
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ember/ordered_dict.h"
#include "ember/tensor.h"

namespace ember {

using TensorDict = OrderedDict<std::string, Tensor>;

namespace io {

// A module: state_dict() / load_state_dict() of named tensors, and buffers (which an optimizer
// has not).
template <class T>
concept ModuleLike = requires(T& m, const TensorDict& state) {
  { m.state_dict() } -> std::convertible_to<TensorDict>;
  m.load_state_dict(state);
  m.named_buffers();
};
// An optimizer (or a scheduler, a GradScaler): state_dict() / load_state_dict(), no buffers.
template <class T>
concept StatefulLike = requires(T& o, const TensorDict& state) {
  { o.state_dict() } -> std::convertible_to<TensorDict>;
  o.load_state_dict(state);
}
&&!ModuleLike<T>;
// A handle to a module: a holder (nn::Linear) or a std::shared_ptr to one.
template <class T>
concept ModuleHandleLike = requires(const T& h) {
  {*h};
  requires ModuleLike<std::remove_reference_t<decltype(*h)>>;
};

// What the templates below hand to src/io/serialize.cpp.
namespace serialize_detail {
void save_dict(const std::string& path, const TensorDict& tensors);
TensorDict load_dict(const std::string& path);
// Raises ValueError naming the file and every difference between the module's state and the
// file's (missing and unexpected names, shapes, dtypes), then copies the values in.
template <class M>
void load_module(M& module, const std::string& path);
void check_module_state(const std::string& path, const TensorDict& expected,
                        const TensorDict& file);
Tensor load_tensor(const std::string& path);
std::vector<Tensor> load_tensor_list(const std::string& path);
TensorDict tensor_list_dict(const std::vector<Tensor>& tensors);

template <class>
inline constexpr bool always_false = false;

template <class M>
void load_module(M& module, const std::string& path) {
  TensorDict file = load_dict(path);
  check_module_state(path, module.state_dict(), file);
  module.load_state_dict(file);
}
}  // namespace serialize_detail

}  // namespace io

// Writes a tensor (under the name "tensor").
inline void save(const Tensor& tensor, const std::string& path) {
  io::serialize_detail::save_dict(path, TensorDict{{"tensor", tensor}});
}
// Writes tensors under the names "0", "1", ...
inline void save(const std::vector<Tensor>& tensors, const std::string& path) {
  io::serialize_detail::save_dict(path, io::serialize_detail::tensor_list_dict(tensors));
}
// Writes named tensors as they are.
inline void save(const TensorDict& tensors, const std::string& path) {
  io::serialize_detail::save_dict(path, tensors);
}
// Writes a module's state_dict() (given as the module, its holder or a shared_ptr), or an
// optimizer's, a scheduler's or a GradScaler's.
template <class T>
void save(const T& object, const std::string& path) {
  if constexpr (io::ModuleHandleLike<T>) {
    io::serialize_detail::save_dict(path, (*object).state_dict());
  } else if constexpr (io::ModuleLike<T> || io::StatefulLike<T>) {
    io::serialize_detail::save_dict(path, object.state_dict());
  } else {
    static_assert(io::serialize_detail::always_false<T>,
                  "ember::save takes a module (holder, shared_ptr or Impl), an optimizer, a "
                  "scheduler, a Tensor, a std::vector<Tensor> or an OrderedDict<std::string, "
                  "Tensor>");
  }
}

// Reads the file's one tensor (whatever its name) into tensor, replacing it.
inline void load(Tensor& tensor, const std::string& path) {
  tensor = io::serialize_detail::load_tensor(path);
}
// Reads tensors "0", "1", ... (what save(std::vector<Tensor>) writes) into tensors.
inline void load(std::vector<Tensor>& tensors, const std::string& path) {
  tensors = io::serialize_detail::load_tensor_list(path);
}
// Reads every tensor of the file, in file order.
inline void load(TensorDict& tensors, const std::string& path) {
  tensors = io::serialize_detail::load_dict(path);
}
// Loads a module's parameters and buffers in place, on the devices they are on now. The file
// must hold exactly the module's names, with its shapes and dtypes; otherwise ValueError lists
// every difference. For an optimizer (scheduler, GradScaler): its load_state_dict().
template <class T>
void load(T& object, const std::string& path) {
  if constexpr (io::ModuleHandleLike<T>) {
    io::serialize_detail::load_module(*object, path);
  } else if constexpr (io::ModuleLike<T>) {
    io::serialize_detail::load_module(object, path);
  } else if constexpr (io::StatefulLike<T>) {
    object.load_state_dict(io::serialize_detail::load_dict(path));
  } else {
    static_assert(io::serialize_detail::always_false<T>,
                  "ember::load takes a module (holder, shared_ptr or Impl), an optimizer, a "
                  "scheduler, a Tensor, a std::vector<Tensor> or an OrderedDict<std::string, "
                  "Tensor>");
  }
}

}  // namespace ember
