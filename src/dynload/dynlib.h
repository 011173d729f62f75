// Opening optional shared libraries at run time (cuBLAS, cuDNN, NCCL, NVML): never linked, so
// ember starts on machines without them and reports what it found.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

namespace ember::dynload {

struct SharedLibrary {
  void* handle = nullptr;
  std::string path;   // the file that was loaded
  std::string error;  // why nothing was loaded
  explicit operator bool() const { return handle != nullptr; }
};

// Opens the first of `names` that loads: each as given (the loader's search path), then from the
// CUDA toolkit's lib64 ($CUDA_HOME, $CUDA_PATH, /usr/local/cuda). When the environment variable
// `override_env` is set, only the file it names is tried ("none" loads nothing). The handle is
// never closed.
// extra_dirs are searched after the toolkit's.
SharedLibrary open_library(const char* override_env, std::initializer_list<const char*> names,
                           const std::vector<std::string>& extra_dirs = {});

// Where pip wheels put NVIDIA's libraries: <site-packages>/nvidia/<sub>/lib and torch/lib, for
// each site-packages or dist-packages of $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr
// and /opt/conda. Only existing directories are returned.
std::vector<std::string> python_library_dirs(const char* sub);

// libcudnn, opened once per process (EMBER_CUDNN_LIBRARY, the loader's path, the toolkit, then
// the Python wheels); its split sub-libraries beside it are preloaded so that cuDNN 9 finds them.
const SharedLibrary& cudnn_library();

// libcublasLt, opened once per process (EMBER_CUBLASLT_LIBRARY, the loader's path, the toolkit,
// then the Python wheels' nvidia/cublas).
const SharedLibrary& cublaslt_library();

// The address of `symbol` in lib, or nullptr.
void* find_symbol(const SharedLibrary& lib, const char* symbol);

}  // namespace ember::dynload
