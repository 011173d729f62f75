// Fills the cuDNN table of cudnn_api.h once per process, and answers backends::cudnn::is_available.
#include "backend/cuda/cudnn_api.h"

#include <cstdlib>
#include <string>

#include "dynload/dynlib.h"
#include "ember/backends.h"
#include "ember/cuda.h"

#ifdef EMBER_WITH_CUDNN
namespace ember::cuda_detail {

using dynload::cudnn_library;
using dynload::SharedLibrary;

namespace {

// Every entry of the table, in order, with its symbol name.
// clang-format off
#define EMBER_CUDNN_ENTRIES(X)                  \
  X(GetErrorString)                             \
  X(Create)                                     \
  X(SetStream)                                  \
  X(CreateTensorDescriptor)                     \
  X(SetTensorNdDescriptor)                      \
  X(DestroyTensorDescriptor)                    \
  X(CreateFilterDescriptor)                     \
  X(SetFilterNdDescriptor)                      \
  X(DestroyFilterDescriptor)                    \
  X(CreateConvolutionDescriptor)                \
  X(SetConvolutionNdDescriptor)                 \
  X(SetConvolutionGroupCount)                   \
  X(SetConvolutionMathType)                     \
  X(DestroyConvolutionDescriptor)               \
  X(GetConvolutionForwardAlgorithm_v7)          \
  X(GetConvolutionBackwardDataAlgorithm_v7)     \
  X(GetConvolutionBackwardFilterAlgorithm_v7)   \
  X(FindConvolutionForwardAlgorithmEx)          \
  X(FindConvolutionBackwardDataAlgorithmEx)     \
  X(FindConvolutionBackwardFilterAlgorithmEx)   \
  X(GetConvolutionForwardWorkspaceSize)         \
  X(GetConvolutionBackwardDataWorkspaceSize)    \
  X(GetConvolutionBackwardFilterWorkspaceSize)  \
  X(ConvolutionForward)                         \
  X(ConvolutionBackwardData)                    \
  X(ConvolutionBackwardFilter)
// clang-format on

bool load(CudnnApi& api) {
  // EMBER_CUDNN_LIBRARY=none means no cuDNN in every build, the emulated one included.
  const char* forced = std::getenv("EMBER_CUDNN_LIBRARY");
  if (forced != nullptr && std::string(forced) == "none") return false;
#ifdef EMBER_CUDA_SIM
#define EMBER_CUDNN_BIND(name) api.name = &::cudnn##name;
  EMBER_CUDNN_ENTRIES(EMBER_CUDNN_BIND)
#undef EMBER_CUDNN_BIND
  return true;
#else
  const SharedLibrary& lib = cudnn_library();
  if (!lib || cuda::cudnn_version() < 8000) return false;
  bool complete = true;
#define EMBER_CUDNN_BIND(name)                                                      \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, "cudnn" #name)); \
  complete = complete && api.name != nullptr;
  EMBER_CUDNN_ENTRIES(EMBER_CUDNN_BIND)
#undef EMBER_CUDNN_BIND
  return complete;
#endif
}

}  // namespace

const CudnnApi* cudnn_api() {
  static const CudnnApi* api = [] {
    static CudnnApi table{};
    return load(table) ? &table : nullptr;
  }();
  return api;
}

}  // namespace ember::cuda_detail
#endif

namespace ember::backends::cudnn {

bool is_available() {
#ifdef EMBER_WITH_CUDNN
  return cuda_detail::cudnn_api() != nullptr && cuda::is_available();
#else
  return false;
#endif
}

}  // namespace ember::backends::cudnn
