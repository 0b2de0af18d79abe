// all_finite's and multi_all_finite's GPU kernel; the test of a value is in
// op/tensor/all_finite_kernels.h. Asynchronous on the stream of `rctx`.
#pragma once

#include <vector>

#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// flag (float32, one element) = 0 where any value of `inputs` is not finite;
// set to 1 first with init_output. Up to kArraysPerLaunch inputs of one
// dtype per launch, so a step's gradients take a few launches, not one each.
void all_finite_gpu(const RunContext& rctx, const std::vector<TensorRef>& inputs,
                    const TensorRef& flag, bool init_output);

}  // namespace mx::op::cuda
