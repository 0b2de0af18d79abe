// The optimizer updates on a GPU (update_gpu.cu): one kernel launch per
// parameter on the operation's stream, running the Step functor of
// update_kernels.h over every element. Only built with MX_USE_CUDA.
// `arrays` are device pointers of `n` elements of `dtype` (float32 or
// float64); `stream` is the engine's cudaStream_t for the weight's GPU.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "optim/update_kernels.h"

namespace mx::optim::gpu {

void run_update(const kernels::SGDArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::NAGArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::NAGPlainArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::AdamArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::AdamWArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::RMSPropArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);
void run_update(const kernels::AdaGradArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream);

}  // namespace mx::optim::gpu
