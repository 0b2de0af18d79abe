// oneDNN kernels for max and average Pooling (NCHW; 1-D as height 1),
// float32 or bfloat16 (PoolSpec::dtype). Each returns false when oneDNN's rules differ from MXNet's
// for the case (the caller then runs the reference kernel).
#pragma once

#include <array>
#include <cstdint>

#include "op/nn/conv_util.h"
#include "op/nn/pool_spec.h"

namespace mx::op::dnnl_impl {

// Strides, kernel and padding as oneDNN takes them: the right padding
// reaches the last window (MXNet's 'full' convention).
struct PoolWindowDims {
  std::array<int64_t, 2> strides, kernel, pad_l, pad_r;
};
PoolWindowDims pool_window_dims(const PoolSpec& s);
// True when oneDNN computes the case as MXNet does (see dnnl_pooling.cc).
bool pool_supported(const PoolSpec& s);

bool pool_forward(const PoolSpec& s, const void* x, void* y, OpReq req, const OpResources& res);

// dx (req) from x and dy. Max pooling runs the forward pass again for the
// positions of the maxima (its workspace), which mx does not keep.
bool pool_backward(const PoolSpec& s, const void* x, const void* dy, void* dx, OpReq req,
                   const OpResources& res);

}  // namespace mx::op::dnnl_impl
