#include "train/device_setup.h"

#include "base/error.h"
#include "base/gpu.h"
#include "base/strings.h"

namespace mx::train {

GpuAvailability gpu_availability() {
  GpuAvailability a;
  a.compiled_with_cuda = gpu::compiled_with_cuda();
  a.device_count = a.compiled_with_cuda ? gpu::device_count() : 0;
  return a;
}

void check_devices(const std::vector<Context>& devices, const std::string& origin,
                   const GpuAvailability& available) {
  for (const Context& ctx : devices) {
    if (!ctx.is_gpu()) continue;
    const std::string asked = ctx.to_string();
    if (!available.compiled_with_cuda)
      throw InputError(str(origin, ": ", asked,
                           " asked for, but this build of mx has no CUDA support (rebuild with "
                           "-DMX_USE_CUDA=ON on a machine with the CUDA toolkit), or use cpu"));
    if (available.device_count == 0)
      throw InputError(str(origin, ": ", asked,
                           " asked for, but no GPU found (no CUDA device or driver on this "
                           "machine); use cpu"));
    if (ctx.id < 0 || ctx.id >= available.device_count)
      throw InputError(str(origin, ": ", asked, " asked for, but only ", available.device_count,
                           " GPU(s) found (gpu:0 to gpu:", available.device_count - 1, ")"));
  }
}

void check_devices(const std::vector<Context>& devices, const std::string& origin) {
  bool any_gpu = false;
  for (const Context& ctx : devices) any_gpu = any_gpu || ctx.is_gpu();
  if (any_gpu) check_devices(devices, origin, gpu_availability());
}

}  // namespace mx::train
