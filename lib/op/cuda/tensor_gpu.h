// GPU kernels of the tensor-shaping operators, one_hot, Cast and the
// operators that fill arrays (the functors are in op/tensor/tensor_kernels.h,
// shape_kernels.h and init_kernels.h). Declared with project types
// only: the operator .cc files register them under MX_USE_CUDA. Every call
// runs asynchronously on the stream of `rctx`; `where` names the operator in
// errors. Nothing is launched for empty tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/engine.h"
#include "op/tensor/shape_kernels.h"
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

// out[i] (req) in[index(i)] for the n elements of out (kernels::StridedGather);
// `in` points at the view's element 0; any dtype.
void strided_gather_gpu(const RunContext& rctx, const char* where, DType dtype, void* out,
                        const void* in, const kernels::StridedIndex& index, int64_t n, OpReq req);

// out[index(i)] (req) in[i] for the n elements of in (kernels::StridedScatter);
// `out` points at the view's element 0, whose elements must be distinct.
void strided_scatter_gpu(const RunContext& rctx, const char* where, DType dtype, void* out,
                         const void* in, const kernels::StridedIndex& index, int64_t n, OpReq req);

// out (req) one_hot(indices, depth) with on_value/off_value in out's dtype.
void one_hot_gpu(const RunContext& rctx, const char* where, const TensorRef& indices, int64_t depth,
                 double on_value, double off_value, const TensorRef& out, OpReq req);

// out (req) value converted to out's dtype (kernels::FillValue).
void fill_gpu(const RunContext& rctx, const char* where, const TensorRef& out, double value,
              OpReq req);

// out (req) start + (i / repeat) * step (kernels::ArangeFill).
void arange_gpu(const RunContext& rctx, const char* where, const TensorRef& out, double start,
                double step, int64_t repeat, OpReq req);

// dst (req) src converted to dst's dtype.
void cast_gpu(const RunContext& rctx, const char* where, const TensorRef& src, const TensorRef& dst,
              OpReq req);

}  // namespace mx::op::cuda
