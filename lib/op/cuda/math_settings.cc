#include "op/cuda/math_settings.h"

#include "base/runtime_config.h"

namespace mx::op::cuda {

bool tf32_allowed() { return runtime_config().gpu_tf32; }

bool deterministic_algorithms() { return runtime_config().gpu_deterministic; }

int cudnn_benchmark_limit() { return runtime_config().cudnn_benchmark_limit; }

}  // namespace mx::op::cuda
