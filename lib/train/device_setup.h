// Checks, before anything is built, that the devices a run asks for exist:
// a GPU needs a build with CUDA, a driver and a device with that number.
// The error names the place the devices came from (a config line or a
// command-line option) and is an InputError (exit 2).
#pragma once

#include <string>
#include <vector>

#include "base/context.h"

namespace mx::train {

// What the machine offers.
struct GpuAvailability {
  bool compiled_with_cuda = false;
  int device_count = 0;
};
// This build and this machine.
GpuAvailability gpu_availability();

// Throws InputError "<origin>: ..." when a device in `devices` is a GPU that
// `available` does not have.
void check_devices(const std::vector<Context>& devices, const std::string& origin,
                   const GpuAvailability& available);
// The same against this machine (asks the driver only when a GPU is named).
void check_devices(const std::vector<Context>& devices, const std::string& origin);

}  // namespace mx::train
