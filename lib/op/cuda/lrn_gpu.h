// The GPU LRN kernels (op/nn/lrn_kernels.h run by op/cuda/lrn_gpu.cu).
// Project types only; built with MX_USE_CUDA.
#pragma once

#include "base/dtype.h"
#include "op/nn/lrn_kernels.h"

namespace mx::op::cuda {

// y (req) and norm from x, float32 or float64, on `stream`.
void lrn_forward_gpu(const LrnKernelGeom& g, DType dtype, const void* x, void* y, void* norm,
                     OpReq req, void* stream);
// dx (req) from x, y, norm and dy.
void lrn_backward_gpu(const LrnKernelGeom& g, DType dtype, const void* x, const void* y,
                      const void* norm, const void* dy, void* dx, OpReq req, void* stream);

}  // namespace mx::op::cuda
