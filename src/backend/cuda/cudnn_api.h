// The cuDNN entry points ember calls, as one table: resolved with dlsym from libcudnn in the CUDA
// build (ember never links cuDNN), the emulated cuDNN's functions in the emulated build.
#pragma once

#ifdef EMBER_WITH_CUDNN
#include <cudnn.h>

namespace ember::cuda_detail {

struct CudnnApi {
  decltype(&cudnnGetErrorString) GetErrorString;
  decltype(&cudnnCreate) Create;
  decltype(&cudnnSetStream) SetStream;
  decltype(&cudnnCreateTensorDescriptor) CreateTensorDescriptor;
  decltype(&cudnnSetTensorNdDescriptor) SetTensorNdDescriptor;
  decltype(&cudnnDestroyTensorDescriptor) DestroyTensorDescriptor;
  decltype(&cudnnCreateFilterDescriptor) CreateFilterDescriptor;
  decltype(&cudnnSetFilterNdDescriptor) SetFilterNdDescriptor;
  decltype(&cudnnDestroyFilterDescriptor) DestroyFilterDescriptor;
  decltype(&cudnnCreateConvolutionDescriptor) CreateConvolutionDescriptor;
  decltype(&cudnnSetConvolutionNdDescriptor) SetConvolutionNdDescriptor;
  decltype(&cudnnSetConvolutionGroupCount) SetConvolutionGroupCount;
  decltype(&cudnnSetConvolutionMathType) SetConvolutionMathType;
  decltype(&cudnnDestroyConvolutionDescriptor) DestroyConvolutionDescriptor;
  decltype(&cudnnGetConvolutionForwardAlgorithm_v7) GetConvolutionForwardAlgorithm_v7;
  decltype(&cudnnGetConvolutionBackwardDataAlgorithm_v7) GetConvolutionBackwardDataAlgorithm_v7;
  decltype(&cudnnGetConvolutionBackwardFilterAlgorithm_v7) GetConvolutionBackwardFilterAlgorithm_v7;
  decltype(&cudnnFindConvolutionForwardAlgorithmEx) FindConvolutionForwardAlgorithmEx;
  decltype(&cudnnFindConvolutionBackwardDataAlgorithmEx) FindConvolutionBackwardDataAlgorithmEx;
  decltype(&cudnnFindConvolutionBackwardFilterAlgorithmEx) FindConvolutionBackwardFilterAlgorithmEx;
  decltype(&cudnnGetConvolutionForwardWorkspaceSize) GetConvolutionForwardWorkspaceSize;
  decltype(&cudnnGetConvolutionBackwardDataWorkspaceSize) GetConvolutionBackwardDataWorkspaceSize;
  decltype(&cudnnGetConvolutionBackwardFilterWorkspaceSize)
      GetConvolutionBackwardFilterWorkspaceSize;
  decltype(&cudnnConvolutionForward) ConvolutionForward;
  decltype(&cudnnConvolutionBackwardData) ConvolutionBackwardData;
  decltype(&cudnnConvolutionBackwardFilter) ConvolutionBackwardFilter;
};

// The table, or nullptr when cuDNN is absent (EMBER_CUDNN_LIBRARY=none, no libcudnn, an entry
// point missing, a version before 8). Loaded once per process.
const CudnnApi* cudnn_api();

}  // namespace ember::cuda_detail
#endif
