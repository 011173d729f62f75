// Versions of the CUDA libraries ember uses, read from the libraries themselves at run time.
// Every variant (CUDA, emulated, no CUDA) reports what the loader finds on this machine.
#include <cstddef>
#include <string>

#include "dynload/dynlib.h"
#include "ember/cuda.h"
#include "ember/error.h"

namespace ember::dynload {

namespace {

struct VersionedLibrary {
  SharedLibrary lib;
  int version = 0;
};

}  // namespace

const SharedLibrary& cublaslt_library() {
  static const SharedLibrary lib = open_library(
      "EMBER_CUBLASLT_LIBRARY",
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so"},
      python_library_dirs("cublas"));
  return lib;
}

namespace {

// Each is opened once per process; a missing library or symbol gives version 0.
const VersionedLibrary& cublas() {
  static const VersionedLibrary v = [] {
    VersionedLibrary r;
    r.lib = cublaslt_library();
    using Fn = size_t (*)();
    if (auto fn = reinterpret_cast<Fn>(find_symbol(r.lib, "cublasLtGetVersion")))
      r.version = static_cast<int>(fn());
    return r;
  }();
  return v;
}

const VersionedLibrary& cudnn() {
  static const VersionedLibrary v = [] {
    VersionedLibrary r;
    r.lib = cudnn_library();
    using Fn = size_t (*)();
    if (auto fn = reinterpret_cast<Fn>(find_symbol(r.lib, "cudnnGetVersion")))
      r.version = static_cast<int>(fn());
    return r;
  }();
  return v;
}

const VersionedLibrary& nccl() {
  static const VersionedLibrary v = [] {
    VersionedLibrary r;
    r.lib = open_library("EMBER_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"});
    using Fn = int (*)(int*);
    int version = 0;
    if (auto fn = reinterpret_cast<Fn>(find_symbol(r.lib, "ncclGetVersion"));
        fn && fn(&version) == 0)
      r.version = version;
    return r;
  }();
  return v;
}

const VersionedLibrary& library(const std::string& name) {
  if (name == "cublas") return cublas();
  if (name == "cudnn") return cudnn();
  if (name == "nccl") return nccl();
  throw Error("[cuda] unknown library '" + name + "': expected cublas, cudnn or nccl");
}

}  // namespace

}  // namespace ember::dynload

namespace ember::cuda {

int cublas_version() { return dynload::cublas().version; }
int cudnn_version() { return dynload::cudnn().version; }
int nccl_version() { return dynload::nccl().version; }

std::string library_path(const std::string& name) {
  const auto& l = dynload::library(name);
  return l.version > 0 ? l.lib.path : std::string();
}

std::string library_error(const std::string& name) {
  const auto& l = dynload::library(name);
  if (l.version > 0) return {};
  return l.lib ? l.lib.path + ": no usable version function" : l.lib.error;
}

std::string format_library_version(const std::string& name, int version) {
  if (version <= 0) return {};
  int major, minor, patch;
  if (name == "cudnn" &&
      version < 90000) {  // cuDNN 8 and older: major * 1000 + minor * 100 + patch
    major = version / 1000;
    minor = version % 1000 / 100;
    patch = version % 100;
  } else {  // major * 10000 + minor * 100 + patch
    major = version / 10000;
    minor = version % 10000 / 100;
    patch = version % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace ember::cuda
