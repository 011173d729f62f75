#include "dynload/dynlib.h"

#include <dlfcn.h>
#include <glob.h>
#include <sys/stat.h>

#include <cstdlib>
#include <vector>

namespace ember::dynload {

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

std::vector<std::string> python_library_dirs(const char* sub) {
  std::vector<std::string> prefixes;
  for (const char* env : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const char* v = std::getenv(env);
    if (v != nullptr && *v != '\0') prefixes.push_back(v);
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    prefixes.push_back(std::string(home) + "/.local");
  }
  for (const char* p : {"/usr/local", "/usr", "/opt/conda"}) prefixes.push_back(p);
  std::vector<std::string> dirs;
  for (const std::string& prefix : prefixes) {
    for (const char* kind : {"site-packages", "dist-packages"}) {
      for (const std::string& tail :
           {std::string("/nvidia/") + sub + "/lib", std::string("/torch/lib")}) {
        const std::string pattern = prefix + "/lib/python3*/" + kind + tail;
        glob_t g{};
        if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
          for (size_t i = 0; i < g.gl_pathc; ++i) dirs.emplace_back(g.gl_pathv[i]);
        }
        globfree(&g);
      }
    }
  }
  return dirs;
}

SharedLibrary open_library(const char* override_env, std::initializer_list<const char*> names,
                           const std::vector<std::string>& extra_dirs) {
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
    std::vector<std::string> dirs = toolkit_dirs();
    dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
    for (const std::string& dir : dirs)
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

const SharedLibrary& cudnn_library() {
  static const SharedLibrary lib = [] {
    // cuDNN 9's libcudnn.so.9 opens its sub-libraries by name; from a directory that is not on
    // the loader's path (a wheel's, or the one EMBER_CUDNN_LIBRARY names) they must already be
    // loaded, as PyTorch does.
    const std::vector<std::string> wheels = python_library_dirs("cudnn");
    std::string dir;
    const char* forced = std::getenv("EMBER_CUDNN_LIBRARY");
    if (forced != nullptr && *forced != '\0' && std::string(forced) != "none") {
      const std::string f(forced);
      const auto slash = f.rfind('/');
      if (slash != std::string::npos) dir = f.substr(0, slash);
    } else if (forced == nullptr || *forced == '\0') {
      void* found = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL);
      if (found != nullptr) {
        dlclose(found);
      } else {
        for (const std::string& d : wheels) {
          struct stat st {};
          if (stat((d + "/libcudnn.so.9").c_str(), &st) == 0) {
            dir = d;
            break;
          }
        }
      }
    }
    if (!dir.empty()) {
      for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
                              "libcudnn_engines_runtime_compiled.so.9", "libcudnn_heuristic.so.9",
                              "libcudnn_ops.so.9", "libcudnn_cnn.so.9"}) {
        dlopen((dir + "/" + sub).c_str(), RTLD_LAZY | RTLD_GLOBAL);  // absent ones are skipped
      }
    }
    return open_library("EMBER_CUDNN_LIBRARY", {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"},
                        wheels);
  }();
  return lib;
}

void* find_symbol(const SharedLibrary& lib, const char* symbol) {
  return lib.handle != nullptr ? dlsym(lib.handle, symbol) : nullptr;
}

}  // namespace ember::dynload
