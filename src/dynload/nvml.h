// NVML (libnvidia-ml.so.1) opened at run time, for ember::cuda::device_health.
#pragma once

#include <string>

namespace ember::dynload {

// How a device ordinal of this build is found in NVML. Each variant defines nvml_locator: the
// CUDA build by the device's PCI bus id (CUDA_VISIBLE_DEVICES may reorder devices), the build
// without CUDA by NVML's own index, the emulated build not at all.
struct NvmlLocator {
  enum Kind { kPciBusId, kIndex, kNone } kind = kNone;
  std::string pci_bus_id;
  int index = 0;
  std::string why_none;  // for kNone
};
NvmlLocator nvml_locator(int device);

}  // namespace ember::dynload
