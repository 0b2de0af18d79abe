// GPU kernels of topk (tensor/ordering.cc): one block per row picks the k
// first elements in topk's order (op/tensor/ordering_kernels.h), round by
// round; the gradient scatters the output gradient to the picked elements.
#pragma once

#include "engine/engine.h"
#include "op/tensor/ordering_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// The outputs topk writes; a TensorRef with null data is one the mode has not.
struct TopKTargets {
  TensorRef values, indices, mask;
  OpReq values_req = OpReq::kNull, indices_req = OpReq::kNull, mask_req = OpReq::kNull;
};

void topk_gpu(const RunContext& rctx, const TensorRef& data, const kernels::TopKGeometry& geometry,
              bool ascend, const TopKTargets& targets);

// grad (req) the output gradient g scattered to the elements `indices` names.
void topk_backward_gpu(const RunContext& rctx, const TensorRef& g, const TensorRef& indices,
                       const kernels::TopKGeometry& geometry, const TensorRef& grad, OpReq req);

}  // namespace mx::op::cuda
