// ember::save / ember::load (ember/io/serialize.h): safetensors files checked against what the
// caller loads them into.
#include "ember/io/serialize.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "ember/error.h"
#include "ember/io/safetensors.h"

namespace ember::io::serialize_detail {

namespace {

std::string shape_str(const Shape& s) {
  std::ostringstream out;
  out << s;
  return out.str();
}

// The index a name "0", "1", ... stands for; -1 when it is not such a name.
int64_t list_index(const std::string& name) {
  int64_t v = -1;
  const char* first = name.data();
  const char* last = first + name.size();
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (first == last || ec != std::errc() || ptr != last || v < 0) return -1;
  if (name.size() > 1 && name[0] == '0') return -1;
  return v;
}

}  // namespace

void save_dict(const std::string& path, const TensorDict& tensors) {
  for (const auto& item : tensors) {
    if (!item.value().defined()) {
      throw ValueError("[save] '" + item.key() + "' is an undefined tensor (writing " + path + ")");
    }
  }
  // "format": "pt" is what safetensors.torch.save_file writes; PyTorch's loaders expect it.
  save_safetensors(path, tensors, {{"format", "pt"}});
}

TensorDict load_dict(const std::string& path) { return load_safetensors(path, Device(kCPU)); }

void check_module_state(const std::string& path, const TensorDict& expected,
                        const TensorDict& file) {
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& item : expected) {
    const Tensor* f = file.find(item.key());
    if (!f) {
      missing.push_back(item.key());
      continue;
    }
    const Tensor& m = item.value();
    if (f->sizes() != m.sizes()) {
      mismatched.push_back("'" + item.key() + "' has shape " + shape_str(f->sizes()) +
                           " in the file, " + shape_str(m.sizes()) + " in the module");
    } else if (f->dtype() != m.dtype()) {
      mismatched.push_back("'" + item.key() + "' has dtype " + std::string(dtype_name(f->dtype())) +
                           " in the file, " + std::string(dtype_name(m.dtype())) +
                           " in the module (convert the module with ->to(dtype) first)");
    }
  }
  for (const auto& item : file) {
    if (!expected.contains(item.key())) unexpected.push_back(item.key());
  }
  if (missing.empty() && unexpected.empty() && mismatched.empty()) return;

  const auto join = [](const std::vector<std::string>& names) {
    std::string s;
    for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
    return s;
  };
  std::string msg = "[load] " + path + " does not match the module:";
  if (!missing.empty()) msg += " missing from the file: " + join(missing) + ";";
  if (!unexpected.empty()) msg += " not in the module: " + join(unexpected) + ";";
  for (const std::string& m : mismatched) msg += " " + m + ";";
  msg.pop_back();
  throw ValueError(msg);
}

Tensor load_tensor(const std::string& path) {
  TensorDict d = load_dict(path);
  if (d.size() != 1) {
    throw ValueError("[load] " + path + " holds " + std::to_string(d.size()) +
                     " tensors, not one: load it into a std::vector<Tensor> or an "
                     "OrderedDict<std::string, Tensor>");
  }
  return d.items()[0].value();
}

TensorDict tensor_list_dict(const std::vector<Tensor>& tensors) {
  TensorDict d;
  for (size_t i = 0; i < tensors.size(); ++i) d.insert(std::to_string(i), tensors[i]);
  return d;
}

std::vector<Tensor> load_tensor_list(const std::string& path) {
  TensorDict d = load_dict(path);
  std::vector<Tensor> out(d.size());
  for (const auto& item : d) {
    const int64_t i = list_index(item.key());
    if (i < 0 || i >= static_cast<int64_t>(d.size())) {
      throw ValueError("[load] " + path + " is not a tensor list: it holds '" + item.key() +
                       "' where the names \"0\" to \"" + std::to_string(d.size() - 1) +
                       "\" were expected (load it into an OrderedDict<std::string, Tensor>)");
    }
    out[static_cast<size_t>(i)] = item.value();
  }
  return out;
}

}  // namespace ember::io::serialize_detail
