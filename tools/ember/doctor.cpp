// `ember doctor`: checks the build, the CUDA stack, the GPUs and the CPU, says what is wrong and
// how to fix it, and runs a smoke test on each GPU.
#include <iostream>

#include "cli.h"
#include "doctor_report.h"

namespace ember::cli {

namespace {

int run_doctor(const Args& args) {
  const doctor::Report r = doctor::collect(!args.has("no-smoke"));
  if (args.has("json")) {
    doctor::print_json(std::cout, r);
  } else {
    doctor::print_text(std::cout, r);
  }
  return r.usable ? kExitOk : kExitFailure;
}

}  // namespace

Command doctor_command() {
  Command c;
  c.name = "doctor";
  c.summary = "check the CUDA setup: versions, GPUs, architectures, diagnosis, smoke test";
  c.description =
      "Prints the ember version and build options (CUDA on/off, the CUDA architectures compiled),\n"
      "the CUDA runtime and driver versions, cuBLAS/cuDNN/NCCL versions (found at run time), each\n"
      "GPU's name, memory, compute capability and SM count, whether the build's architectures\n"
      "cover it, its NVML health, the CPU and its instruction sets. Then a diagnosis with the fix\n"
      "for each problem (no driver, driver older than the runtime, no GPU, a build without CUDA,\n"
      "an architecture not compiled, cuDNN or NCCL missing), and a smoke test on each GPU:\n"
      "allocation, copies and a small matmul compared with the CPU.\n"
      "\n"
      "Exit codes: 0 CUDA is usable, 1 it is not (or the smoke test failed), 2 usage error.";
  c.flags = {
      {"json", "", "print the report as one JSON object", ""},
      {"no-smoke", "", "skip the smoke test on the GPUs", ""},
  };
  c.run = run_doctor;
  return c;
}

}  // namespace ember::cli
