// The GPU Pooling kernels (op/nn/pooling_kernels.h run by
// op/cuda/pooling_gpu.cu). Project types only; built with MX_USE_CUDA.
#pragma once

#include "base/dtype.h"
#include "op/nn/pooling_kernels.h"

namespace mx::op::cuda {

// y (req) from x, both planes of `g`, float32, float64, float16 or bfloat16, on `stream`.
void pooling_forward_gpu(const PoolKernelGeom& g, DType dtype, const void* x, void* y, OpReq req,
                         void* stream);
// dx (req) from x, y and dy.
void pooling_backward_gpu(const PoolKernelGeom& g, DType dtype, const void* x, const void* y,
                          const void* dy, void* dx, OpReq req, void* stream);

}  // namespace mx::op::cuda
