// oneDNN kernels for the three passes of a convolution (ConvGeom of
// conv_util.h), float32. Convolution and Deconvolution are both written with
// them, as their reference kernels are. Each returns false when oneDNN does
// not take the case (the caller then runs the reference kernel). `dtype`:
// every array is float32, or bfloat16 (float32 sums inside oneDNN).
#pragma once

#include <optional>

#include "op/dnnl/dnnl_context.h"
#include "op/nn/conv_util.h"

namespace mx::op::dnnl_impl {

// y (req) = conv(x, w) + bias (bias may be null). With `w_stamp` (inference)
// the weights are reordered to oneDNN's layout once per content, not per call.
bool conv_forward(const ConvGeom& g, const void* x, const void* w, const void* bias, void* y,
                  OpReq req, const OpResources& res,
                  std::optional<ContentStamp> w_stamp = std::nullopt,
                  DType dtype = DType::kFloat32);

// dx (req) = the data gradient of conv from dy and w (in float32 not taken
// for fewer than 4 input channels per group).
bool conv_backward_data(const ConvGeom& g, const void* dy, const void* w, void* dx, OpReq req,
                        const OpResources& res, DType dtype = DType::kFloat32);

// dw (w_req) and db (b_req; db may be null) from x and dy.
bool conv_backward_weights(const ConvGeom& g, const void* x, const void* dy, void* dw, OpReq w_req,
                           void* db, OpReq b_req, const OpResources& res,
                           DType dtype = DType::kFloat32);

}  // namespace mx::op::dnnl_impl
