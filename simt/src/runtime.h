// What the cudart shim needs from the emulator's scheduler (src/emu_runtime.cpp).
#pragma once

#include <string>

#include "simt/emu.h"

namespace simt::detail {

// Largest dynamic shared memory a block may opt into (an H100's 227 KiB).
inline constexpr std::size_t kMaxDynamicSharedOptIn = 227 * 1024;

// Runs every block of a validated launch and returns when all have finished. A kernel-side
// failure (barrier misuse, bad warp mask, deadlock, trap) gives cudaErrorLaunchFailure and a
// readable description in *error.
cudaError_t run_kernel(const KernelCall& call, std::string* error);

// True while the calling OS thread is running a block (device code is executing).
bool in_device_code();

}  // namespace simt::detail
