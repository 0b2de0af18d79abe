// train.precision: the type a network trains in. float32 is the reference;
// bfloat16 (CPU and GPU) and float16 (GPU) run the AMP graph pass
// (graph/amp_pass.h) over the network, with
// float32 master weights, optimizer states, BatchNorm statistics and
// checkpoints (the casts' gradients bring every parameter's gradient back to
// float32 before the update). A precision the machine cannot run fast is
// refused before anything is read, naming the missing feature.
#pragma once

#include <string>
#include <vector>

#include "base/context.h"
#include "base/gpu.h"
#include "graph/symbol.h"

namespace mx::train {

enum class Precision { kFloat32, kBFloat16, kFloat16 };

// "float32", "bfloat16", "float16"; anything else is an InputError naming `origin`.
Precision parse_train_precision(const std::string& text, const std::string& origin);
const char* precision_name(Precision p);

// What bfloat16 training on the CPU needs, detected once (detect_cpu_features)
// or given by a test.
struct CpuFeatures {
  bool dnnl = false;         // mx built with oneDNN and MX_DNNL not 0
  bool avx512_bf16 = false;  // bfloat16 products in hardware (AVX512-BF16 or AMX)
};
CpuFeatures detect_cpu_features();

// A GPU's compute capability as major * 10 + minor, 0 where unknown
// (gpu::compute_capability, or a test's).
using GpuCapability = int (*)(int device);

// Throws InputError (exit code 2) naming `origin` and the missing feature
// where `p` cannot train on `devices` with `cpu`: bfloat16 on the CPU needs
// oneDNN and bfloat16 instructions; float16 runs on GPUs only; on a GPU,
// float16 needs tensor cores (compute capability 7.0) and bfloat16 8.0.
void check_precision_supported(Precision p, const std::vector<Context>& devices,
                               const CpuFeatures& cpu, const std::string& origin,
                               GpuCapability gpu_capability = gpu::compute_capability);

// The network as it trains in `p` (float32: unchanged) on `devices`: with
// the CPU among them, the operators' classes for the CPU (amp_on_cpu).
graph::Symbol apply_precision(const graph::Symbol& network, Precision p,
                              const std::vector<Context>& devices);

}  // namespace mx::train
