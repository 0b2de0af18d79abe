// oneDNN kernels for LRN across channels (NCHW), float32, odd nsize only
// (MXNet sums a symmetric window of radius (nsize - 1) / 2 but divides alpha
// by nsize; oneDNN's even windows are not symmetric). The hidden output
// tmp_norm is not written on this path: the backward pass runs the forward
// pass again for oneDNN's workspace instead of reading it.
#pragma once

#include <cstdint>

#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

struct LrnSpec {
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int nsize = 1;
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f;
};

bool lrn_forward(const LrnSpec& s, const float* x, float* y, OpReq req, const OpResources& res);
bool lrn_backward(const LrnSpec& s, const float* x, const float* dy, float* dx, OpReq req,
                  const OpResources& res);

}  // namespace mx::op::dnnl_impl
