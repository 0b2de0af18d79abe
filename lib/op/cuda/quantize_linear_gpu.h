// QuantizeLinear's GPU kernel; the functor is in op/tensor/quantize_linear_kernels.h.
// Asynchronous on the stream of `rctx`.
#pragma once

#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// y = QuantizeLinear(x, scale, zero_point) with `channels` slices of `inner`
// elements (quantize_linear_kernels.h); y and zero_point uint8 or int8.
void quantize_linear_forward_gpu(const RunContext& rctx, const TensorRef& x, const TensorRef& scale,
                                 const TensorRef& zero_point, const TensorRef& y, int64_t inner,
                                 int64_t channels);

}  // namespace mx::op::cuda
