#include "train/precision.h"

#include <algorithm>

#include "base/error.h"
#include "graph/amp_pass.h"
#include "op/dnnl/dnnl_switch.h"

namespace mx::train {

Precision parse_train_precision(const std::string& text, const std::string& origin) {
  if (text == "float32") return Precision::kFloat32;
  if (text == "bfloat16") return Precision::kBFloat16;
  if (text == "float16") return Precision::kFloat16;
  throw InputError(origin + ": train.precision must be float32, bfloat16 or float16, not '" + text +
                   "'");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFloat32: return "float32";
    case Precision::kBFloat16: return "bfloat16";
    case Precision::kFloat16: return "float16";
  }
  return "float32";
}

CpuFeatures detect_cpu_features() {
  CpuFeatures f;
  f.dnnl = op::dnnl_built() && op::dnnl_enabled();
  f.avx512_bf16 = op::dnnl_bf16_available();  // oneDNN's ISA detection (ONEDNN_MAX_CPU_ISA caps it)
  return f;
}

void check_precision_supported(Precision p, const std::vector<Context>& devices,
                               const CpuFeatures& cpu, const std::string& origin,
                               GpuCapability gpu_capability) {
  if (p == Precision::kFloat32) return;
  const std::string what = origin + ": train.precision " + precision_name(p);
  bool on_cpu = false;
  for (const Context& d : devices) {
    if (!d.is_gpu()) {
      on_cpu = true;
      continue;
    }
    // cuDNN's and cuBLAS's 16-bit kernels with float32 sums run on tensor
    // cores; without them they would be slower than float32.
    const int needed = p == Precision::kFloat16 ? 70 : 80;
    const int have = gpu_capability(d.id);
    if (have > 0 && have < needed)
      throw InputError(str(what, " needs a GPU of compute capability ", needed / 10, ".",
                           needed % 10, " or later; ", d.to_string(), " has ", have / 10, ".",
                           have % 10, "; train in float32 there"));
  }
  if (!on_cpu) return;
  if (p == Precision::kFloat16)
    throw InputError(what + " runs on GPUs only; on the CPU train in bfloat16");
  // No slow emulation: bfloat16 is worth it only with the instructions.
  if (!cpu.dnnl)
    throw InputError(what + " needs mx's oneDNN kernels (built with MX_USE_DNNL, MX_DNNL not 0)");
  if (!cpu.avx512_bf16)
    throw InputError(what +
                     " needs a CPU with bfloat16 instructions: this CPU lacks avx512_bf16 "
                     "(AVX512-BF16 or AMX); train in float32");
}

graph::Symbol apply_precision(const graph::Symbol& network, Precision p,
                              const std::vector<Context>& devices) {
  const bool on_cpu =
      std::any_of(devices.begin(), devices.end(), [](const Context& d) { return !d.is_gpu(); });
  const DeviceKind where = on_cpu ? DeviceKind::kCPU : DeviceKind::kGPU;
  switch (p) {
    case Precision::kFloat32: return network;
    case Precision::kBFloat16:
      return graph::convert_to_mixed_precision(network, DType::kBFloat16, where);
    case Precision::kFloat16:
      return graph::convert_to_mixed_precision(network, DType::kFloat16, where);
  }
  return network;
}

}  // namespace mx::train
