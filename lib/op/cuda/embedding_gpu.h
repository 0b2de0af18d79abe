// Embedding's GPU kernels; functors in op/nn/embedding_kernels.h.
// Asynchronous on the stream of `rctx`; weights of float32 or float64,
// indices of any type but float16 (as on the CPU).
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// out (req) the rows of `weight` (rows x dim) named by `indices`.
void embedding_forward_gpu(const RunContext& rctx, const TensorRef& indices,
                           const TensorRef& weight, const TensorRef& out, OpReq req);

// dweight (req) the sum of the rows of `dy` into the rows named by `indices`
// (kWrite zeroes dweight first).
void embedding_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& dy,
                            const TensorRef& dweight, OpReq req);

}  // namespace mx::op::cuda
