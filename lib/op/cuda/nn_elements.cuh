// The definition of cuda::run_elements (declared in nn_gpu.h) for the .cu
// files that instantiate it for their functors (those over float16 and
// bfloat16 run as the same functors over CUDA's types: on_device).
#pragma once

#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/nn_gpu.h"

namespace mx::op::cuda {

template <typename F>
void run_elements(int64_t n, void* stream, const char* where, const F& f) {
  launch_elements(n, stream_of(stream), where, on_device(f));
}

}  // namespace mx::op::cuda
