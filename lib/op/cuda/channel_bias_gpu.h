// A per-channel bias on (batch, channels, plane) data in float16 or bfloat16:
// Convolution's and Deconvolution's bias and its gradient in mixed precision
// (float32 and float64 go through cuDNN's cudnnAddTensor and
// cudnnConvolutionBackwardBias). Sums in float64, in a fixed order.
// Project types only; built with MX_USE_CUDA.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// y[n, c, p] += bias[c].
void channel_bias_add_gpu(const char* op, DType dtype, const RunContext& rctx, const void* bias,
                          void* y, int64_t batch, int64_t channels, int64_t plane);

// db[c] (req) the sum of dy[n, c, p] over n and p; one block per channel.
void channel_bias_grad_gpu(const char* op, DType dtype, const RunContext& rctx, const void* dy,
                           int64_t batch, int64_t channels, int64_t plane, void* db, OpReq req);

}  // namespace mx::op::cuda
