// Names and descriptions of cudaError_t codes for the host CUDA runtime shim (the names of every
// code in driver_types.h; the descriptions libcudart gives for the ones the emulator returns).
#include <cuda_runtime_api.h>

namespace {

struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorCudartUnloading, "cudaErrorCudartUnloading", "driver shutting down"},
    {cudaErrorProfilerDisabled, "cudaErrorProfilerDisabled", "cudaErrorProfilerDisabled"},
    {cudaErrorProfilerNotInitialized, "cudaErrorProfilerNotInitialized", "cudaErrorProfilerNotInitialized"},
    {cudaErrorProfilerAlreadyStarted, "cudaErrorProfilerAlreadyStarted", "cudaErrorProfilerAlreadyStarted"},
    {cudaErrorProfilerAlreadyStopped, "cudaErrorProfilerAlreadyStopped", "cudaErrorProfilerAlreadyStopped"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration", "invalid configuration argument"},
    {cudaErrorInvalidPitchValue, "cudaErrorInvalidPitchValue", "invalid pitch argument"},
    {cudaErrorInvalidSymbol, "cudaErrorInvalidSymbol", "invalid device symbol"},
    {cudaErrorInvalidHostPointer, "cudaErrorInvalidHostPointer", "invalid host pointer"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidTexture, "cudaErrorInvalidTexture", "cudaErrorInvalidTexture"},
    {cudaErrorInvalidTextureBinding, "cudaErrorInvalidTextureBinding", "cudaErrorInvalidTextureBinding"},
    {cudaErrorInvalidChannelDescriptor, "cudaErrorInvalidChannelDescriptor", "cudaErrorInvalidChannelDescriptor"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorAddressOfConstant, "cudaErrorAddressOfConstant", "cudaErrorAddressOfConstant"},
    {cudaErrorTextureFetchFailed, "cudaErrorTextureFetchFailed", "cudaErrorTextureFetchFailed"},
    {cudaErrorTextureNotBound, "cudaErrorTextureNotBound", "cudaErrorTextureNotBound"},
    {cudaErrorSynchronizationError, "cudaErrorSynchronizationError", "cudaErrorSynchronizationError"},
    {cudaErrorInvalidFilterSetting, "cudaErrorInvalidFilterSetting", "cudaErrorInvalidFilterSetting"},
    {cudaErrorInvalidNormSetting, "cudaErrorInvalidNormSetting", "cudaErrorInvalidNormSetting"},
    {cudaErrorMixedDeviceExecution, "cudaErrorMixedDeviceExecution", "cudaErrorMixedDeviceExecution"},
    {cudaErrorNotYetImplemented, "cudaErrorNotYetImplemented", "cudaErrorNotYetImplemented"},
    {cudaErrorMemoryValueTooLarge, "cudaErrorMemoryValueTooLarge", "cudaErrorMemoryValueTooLarge"},
    {cudaErrorStubLibrary, "cudaErrorStubLibrary", "cudaErrorStubLibrary"},
    {cudaErrorInsufficientDriver, "cudaErrorInsufficientDriver", "cudaErrorInsufficientDriver"},
    {cudaErrorCallRequiresNewerDriver, "cudaErrorCallRequiresNewerDriver", "cudaErrorCallRequiresNewerDriver"},
    {cudaErrorInvalidSurface, "cudaErrorInvalidSurface", "cudaErrorInvalidSurface"},
    {cudaErrorDuplicateVariableName, "cudaErrorDuplicateVariableName", "cudaErrorDuplicateVariableName"},
    {cudaErrorDuplicateTextureName, "cudaErrorDuplicateTextureName", "cudaErrorDuplicateTextureName"},
    {cudaErrorDuplicateSurfaceName, "cudaErrorDuplicateSurfaceName", "cudaErrorDuplicateSurfaceName"},
    {cudaErrorDevicesUnavailable, "cudaErrorDevicesUnavailable", "cudaErrorDevicesUnavailable"},
    {cudaErrorIncompatibleDriverContext, "cudaErrorIncompatibleDriverContext", "cudaErrorIncompatibleDriverContext"},
    {cudaErrorMissingConfiguration, "cudaErrorMissingConfiguration", "__global__ function call is not configured"},
    {cudaErrorPriorLaunchFailure, "cudaErrorPriorLaunchFailure", "cudaErrorPriorLaunchFailure"},
    {cudaErrorLaunchMaxDepthExceeded, "cudaErrorLaunchMaxDepthExceeded", "cudaErrorLaunchMaxDepthExceeded"},
    {cudaErrorLaunchFileScopedTex, "cudaErrorLaunchFileScopedTex", "cudaErrorLaunchFileScopedTex"},
    {cudaErrorLaunchFileScopedSurf, "cudaErrorLaunchFileScopedSurf", "cudaErrorLaunchFileScopedSurf"},
    {cudaErrorSyncDepthExceeded, "cudaErrorSyncDepthExceeded", "cudaErrorSyncDepthExceeded"},
    {cudaErrorLaunchPendingCountExceeded, "cudaErrorLaunchPendingCountExceeded", "cudaErrorLaunchPendingCountExceeded"},
    {cudaErrorInvalidDeviceFunction, "cudaErrorInvalidDeviceFunction", "invalid device function"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorDeviceNotLicensed, "cudaErrorDeviceNotLicensed", "cudaErrorDeviceNotLicensed"},
    {cudaErrorSoftwareValidityNotEstablished, "cudaErrorSoftwareValidityNotEstablished", "cudaErrorSoftwareValidityNotEstablished"},
    {cudaErrorStartupFailure, "cudaErrorStartupFailure", "cudaErrorStartupFailure"},
    {cudaErrorInvalidKernelImage, "cudaErrorInvalidKernelImage", "cudaErrorInvalidKernelImage"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "cudaErrorDeviceUninitialized"},
    {cudaErrorMapBufferObjectFailed, "cudaErrorMapBufferObjectFailed", "cudaErrorMapBufferObjectFailed"},
    {cudaErrorUnmapBufferObjectFailed, "cudaErrorUnmapBufferObjectFailed", "cudaErrorUnmapBufferObjectFailed"},
    {cudaErrorArrayIsMapped, "cudaErrorArrayIsMapped", "cudaErrorArrayIsMapped"},
    {cudaErrorAlreadyMapped, "cudaErrorAlreadyMapped", "cudaErrorAlreadyMapped"},
    {cudaErrorNoKernelImageForDevice, "cudaErrorNoKernelImageForDevice", "no kernel image is available for execution on the device"},
    {cudaErrorAlreadyAcquired, "cudaErrorAlreadyAcquired", "cudaErrorAlreadyAcquired"},
    {cudaErrorNotMapped, "cudaErrorNotMapped", "cudaErrorNotMapped"},
    {cudaErrorNotMappedAsArray, "cudaErrorNotMappedAsArray", "cudaErrorNotMappedAsArray"},
    {cudaErrorNotMappedAsPointer, "cudaErrorNotMappedAsPointer", "cudaErrorNotMappedAsPointer"},
    {cudaErrorECCUncorrectable, "cudaErrorECCUncorrectable", "cudaErrorECCUncorrectable"},
    {cudaErrorUnsupportedLimit, "cudaErrorUnsupportedLimit", "cudaErrorUnsupportedLimit"},
    {cudaErrorDeviceAlreadyInUse, "cudaErrorDeviceAlreadyInUse", "cudaErrorDeviceAlreadyInUse"},
    {cudaErrorPeerAccessUnsupported, "cudaErrorPeerAccessUnsupported", "cudaErrorPeerAccessUnsupported"},
    {cudaErrorInvalidPtx, "cudaErrorInvalidPtx", "cudaErrorInvalidPtx"},
    {cudaErrorInvalidGraphicsContext, "cudaErrorInvalidGraphicsContext", "cudaErrorInvalidGraphicsContext"},
    {cudaErrorNvlinkUncorrectable, "cudaErrorNvlinkUncorrectable", "cudaErrorNvlinkUncorrectable"},
    {cudaErrorJitCompilerNotFound, "cudaErrorJitCompilerNotFound", "cudaErrorJitCompilerNotFound"},
    {cudaErrorUnsupportedPtxVersion, "cudaErrorUnsupportedPtxVersion", "cudaErrorUnsupportedPtxVersion"},
    {cudaErrorJitCompilationDisabled, "cudaErrorJitCompilationDisabled", "cudaErrorJitCompilationDisabled"},
    {cudaErrorUnsupportedExecAffinity, "cudaErrorUnsupportedExecAffinity", "cudaErrorUnsupportedExecAffinity"},
    {cudaErrorUnsupportedDevSideSync, "cudaErrorUnsupportedDevSideSync", "cudaErrorUnsupportedDevSideSync"},
    {cudaErrorContained, "cudaErrorContained", "cudaErrorContained"},
    {cudaErrorInvalidSource, "cudaErrorInvalidSource", "cudaErrorInvalidSource"},
    {cudaErrorFileNotFound, "cudaErrorFileNotFound", "cudaErrorFileNotFound"},
    {cudaErrorSharedObjectSymbolNotFound, "cudaErrorSharedObjectSymbolNotFound", "cudaErrorSharedObjectSymbolNotFound"},
    {cudaErrorSharedObjectInitFailed, "cudaErrorSharedObjectInitFailed", "cudaErrorSharedObjectInitFailed"},
    {cudaErrorOperatingSystem, "cudaErrorOperatingSystem", "cudaErrorOperatingSystem"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalState, "cudaErrorIllegalState", "the operation cannot be performed in the present state"},
    {cudaErrorLossyQuery, "cudaErrorLossyQuery", "cudaErrorLossyQuery"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchOutOfResources, "cudaErrorLaunchOutOfResources", "too many resources requested for launch"},
    {cudaErrorLaunchTimeout, "cudaErrorLaunchTimeout", "the launch timed out and was terminated"},
    {cudaErrorLaunchIncompatibleTexturing, "cudaErrorLaunchIncompatibleTexturing", "cudaErrorLaunchIncompatibleTexturing"},
    {cudaErrorPeerAccessAlreadyEnabled, "cudaErrorPeerAccessAlreadyEnabled", "cudaErrorPeerAccessAlreadyEnabled"},
    {cudaErrorPeerAccessNotEnabled, "cudaErrorPeerAccessNotEnabled", "cudaErrorPeerAccessNotEnabled"},
    {cudaErrorSetOnActiveProcess, "cudaErrorSetOnActiveProcess", "cudaErrorSetOnActiveProcess"},
    {cudaErrorContextIsDestroyed, "cudaErrorContextIsDestroyed", "cudaErrorContextIsDestroyed"},
    {cudaErrorAssert, "cudaErrorAssert", "device-side assert triggered"},
    {cudaErrorTooManyPeers, "cudaErrorTooManyPeers", "cudaErrorTooManyPeers"},
    {cudaErrorHostMemoryAlreadyRegistered, "cudaErrorHostMemoryAlreadyRegistered", "cudaErrorHostMemoryAlreadyRegistered"},
    {cudaErrorHostMemoryNotRegistered, "cudaErrorHostMemoryNotRegistered", "cudaErrorHostMemoryNotRegistered"},
    {cudaErrorHardwareStackError, "cudaErrorHardwareStackError", "cudaErrorHardwareStackError"},
    {cudaErrorIllegalInstruction, "cudaErrorIllegalInstruction", "an illegal instruction was encountered"},
    {cudaErrorMisalignedAddress, "cudaErrorMisalignedAddress", "misaligned address"},
    {cudaErrorInvalidAddressSpace, "cudaErrorInvalidAddressSpace", "cudaErrorInvalidAddressSpace"},
    {cudaErrorInvalidPc, "cudaErrorInvalidPc", "cudaErrorInvalidPc"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorCooperativeLaunchTooLarge, "cudaErrorCooperativeLaunchTooLarge", "cudaErrorCooperativeLaunchTooLarge"},
    {cudaErrorTensorMemoryLeak, "cudaErrorTensorMemoryLeak", "cudaErrorTensorMemoryLeak"},
    {cudaErrorNotPermitted, "cudaErrorNotPermitted", "operation not permitted"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorSystemNotReady, "cudaErrorSystemNotReady", "cudaErrorSystemNotReady"},
    {cudaErrorSystemDriverMismatch, "cudaErrorSystemDriverMismatch", "cudaErrorSystemDriverMismatch"},
    {cudaErrorCompatNotSupportedOnDevice, "cudaErrorCompatNotSupportedOnDevice", "cudaErrorCompatNotSupportedOnDevice"},
    {cudaErrorMpsConnectionFailed, "cudaErrorMpsConnectionFailed", "cudaErrorMpsConnectionFailed"},
    {cudaErrorMpsRpcFailure, "cudaErrorMpsRpcFailure", "cudaErrorMpsRpcFailure"},
    {cudaErrorMpsServerNotReady, "cudaErrorMpsServerNotReady", "cudaErrorMpsServerNotReady"},
    {cudaErrorMpsMaxClientsReached, "cudaErrorMpsMaxClientsReached", "cudaErrorMpsMaxClientsReached"},
    {cudaErrorMpsMaxConnectionsReached, "cudaErrorMpsMaxConnectionsReached", "cudaErrorMpsMaxConnectionsReached"},
    {cudaErrorMpsClientTerminated, "cudaErrorMpsClientTerminated", "cudaErrorMpsClientTerminated"},
    {cudaErrorCdpNotSupported, "cudaErrorCdpNotSupported", "cudaErrorCdpNotSupported"},
    {cudaErrorCdpVersionMismatch, "cudaErrorCdpVersionMismatch", "cudaErrorCdpVersionMismatch"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated", "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureMerge, "cudaErrorStreamCaptureMerge", "operation would result in a merge of separate capture sequences"},
    {cudaErrorStreamCaptureUnmatched, "cudaErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"},
    {cudaErrorStreamCaptureUnjoined, "cudaErrorStreamCaptureUnjoined", "capturing stream has unjoined work"},
    {cudaErrorStreamCaptureIsolation, "cudaErrorStreamCaptureIsolation", "dependency created on uncaptured work in another stream"},
    {cudaErrorStreamCaptureImplicit, "cudaErrorStreamCaptureImplicit", "operation would make the legacy stream depend on a capturing blocking stream"},
    {cudaErrorCapturedEvent, "cudaErrorCapturedEvent", "operation not permitted on an event last recorded in a capturing stream"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread", "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorTimeout, "cudaErrorTimeout", "cudaErrorTimeout"},
    {cudaErrorGraphExecUpdateFailure, "cudaErrorGraphExecUpdateFailure", "cudaErrorGraphExecUpdateFailure"},
    {cudaErrorExternalDevice, "cudaErrorExternalDevice", "cudaErrorExternalDevice"},
    {cudaErrorInvalidClusterSize, "cudaErrorInvalidClusterSize", "cudaErrorInvalidClusterSize"},
    {cudaErrorFunctionNotLoaded, "cudaErrorFunctionNotLoaded", "cudaErrorFunctionNotLoaded"},
    {cudaErrorInvalidResourceType, "cudaErrorInvalidResourceType", "cudaErrorInvalidResourceType"},
    {cudaErrorInvalidResourceConfiguration, "cudaErrorInvalidResourceConfiguration", "cudaErrorInvalidResourceConfiguration"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* find(cudaError_t code) {
  for (const ErrorText& e : kErrors) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

}  // namespace

extern "C" {

const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* e = find(error);
  return e ? e->name : "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* e = find(error);
  return e ? e->text : "unrecognized error code";
}

}  // extern "C"
