#include "cuda/dynlib.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace ember::cuda_detail {

namespace {

// The path a handle was loaded from, as the dynamic loader resolved it.
std::string loaded_path(void* handle, const std::string& fallback) {
  char origin[4096] = {};
  if (dlinfo(handle, RTLD_DI_ORIGIN, origin) == 0 && origin[0] != '\0') {
    auto slash = fallback.rfind('/');
    return std::string(origin) + "/" +
           (slash == std::string::npos ? fallback : fallback.substr(slash + 1));
  }
  return fallback;
}

std::vector<std::string> toolkit_dirs() {
  std::vector<std::string> dirs;
  for (const char* env : {"CUDA_HOME", "CUDA_PATH"}) {
    const char* v = std::getenv(env);
    if (v != nullptr && *v != '\0') dirs.push_back(std::string(v) + "/lib64");
  }
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

}  // namespace

SharedLibrary open_library(const char* override_env, std::initializer_list<const char*> names) {
  SharedLibrary lib;
  std::vector<std::string> candidates;
  const char* forced = override_env != nullptr ? std::getenv(override_env) : nullptr;
  if (forced != nullptr && *forced != '\0') {
    if (std::string(forced) == "none") {
      lib.error = std::string("disabled by ") + override_env + "=none";
      return lib;
    }
    candidates.push_back(forced);
  } else {
    for (const char* n : names) candidates.push_back(n);
    for (const std::string& dir : toolkit_dirs())
      for (const char* n : names) candidates.push_back(dir + "/" + n);
  }
  for (const std::string& c : candidates) {
    dlerror();
    if (void* h = dlopen(c.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
      lib.handle = h;
      lib.path = loaded_path(h, c);
      lib.error.clear();
      return lib;
    }
    if (lib.error.empty()) {
      const char* why = dlerror();
      lib.error = why != nullptr ? why : c + ": cannot be opened";
    }
  }
  return lib;
}

void* find_symbol(const SharedLibrary& lib, const char* symbol) {
  return lib.handle != nullptr ? dlsym(lib.handle, symbol) : nullptr;
}

}  // namespace ember::cuda_detail
