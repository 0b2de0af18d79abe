// GPU kernels of take, gather_nd and where (tensor/indexing.cc); the
// element logic is in op/tensor/indexing_kernels.h. Data of any dtype, index
// and condition arrays of any dtype; the gradients of take and gather_nd
// (atomic scatter-adds) take float32 and float64. Range checks (take's
// raise mode, gather_nd) write a flag into temporary device memory and wait
// for it, so an error is raised by the kernel call that found it.
#pragma once

#include "engine/engine.h"
#include "op/resources.h"
#include "op/tensor/indexing_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

void take_gpu(const RunContext& rctx, const TensorRef& data, const TensorRef& indices,
              const kernels::TakeLayout& layout, kernels::TakeMode mode, const TensorRef& out,
              OpReq req, const OpResources& resources);
// grad (req) the gradient of take for the output gradient g.
void take_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& g,
                       const kernels::TakeLayout& layout, kernels::TakeMode mode,
                       const TensorRef& grad, OpReq req);

void gather_nd_gpu(const RunContext& rctx, const TensorRef& data, const TensorRef& indices,
                   const kernels::GatherNdLayout& layout, const TensorRef& out, OpReq req,
                   const OpResources& resources);
void gather_nd_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& g,
                            const kernels::GatherNdLayout& layout, const TensorRef& grad,
                            OpReq req);

void where_gpu(const RunContext& rctx, const TensorRef& cond, const TensorRef& x,
               const TensorRef& y, int64_t inner, const TensorRef& out, OpReq req);
// grad (req) g where the condition picks x (x_side) or y, 0 elsewhere.
void where_backward_gpu(const RunContext& rctx, const TensorRef& cond, const TensorRef& g,
                        int64_t inner, bool x_side, const TensorRef& grad, OpReq req);

}  // namespace mx::op::cuda
