// GPU kernels of the tensor-shaping operators, one_hot and Cast (the
// functors are in op/tensor/tensor_kernels.h). Declared with project types
// only: the operator .cc files register them under MX_USE_CUDA. Every call
// runs asynchronously on the stream of `rctx`; `where` names the operator in
// errors. Nothing is launched for empty tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "op/tensor/tensor_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// dst (req) src, same dtype and size: a device-to-device copy, an add kernel
// for kAdd, nothing when dst is src (in place) or req is kNull.
void copy_gpu(const RunContext& rctx, const char* where, const TensorRef& dst, const TensorRef& src,
              OpReq req);

// Every byte of `t` zero (0 in every dtype).
void zero_gpu(const RunContext& rctx, const char* where, const TensorRef& t);

// The RowBlocks copy (op/tensor/tensor_kernels.h) of elements of `dtype`.
void copy_row_blocks_gpu(const RunContext& rctx, const char* where, DType dtype, void* dst,
                         const void* src, const kernels::RowBlocks& blocks, OpReq req);

// out (req) `in` with its axes permuted: output axis d is input axis perm[d].
void transpose_gpu(const RunContext& rctx, const char* where, const TensorRef& in,
                   const std::vector<int>& perm, const TensorRef& out, OpReq req);

// out (req) one_hot(indices, depth) with on_value/off_value in out's dtype.
void one_hot_gpu(const RunContext& rctx, const char* where, const TensorRef& indices, int64_t depth,
                 double on_value, double off_value, const TensorRef& out, OpReq req);

// dst (req) src converted to dst's dtype.
void cast_gpu(const RunContext& rctx, const char* where, const TensorRef& src, const TensorRef& dst,
              OpReq req);

}  // namespace mx::op::cuda
