// oneDNN kernels for BatchNorm, float32, on data seen as (outer, channels,
// inner) around the channel axis (any axis: oneDNN sees NCHW with
// N = outer, H = inner, W = 1). The statistics follow MXNet's semantics as
// the reference kernel does (op/nn/batch_norm.cc): biased batch variance,
// moving statistics moved in the training forward pass, and the saved
// 'var' output holding 1/sqrt(var + eps).
#pragma once

#include <cstdint>

#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

struct BatchNormSpec {
  int64_t outer = 1, channels = 1, inner = 1;
  float eps = 1e-3f;
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool batch_stats = true;  // training without use_global_stats
};

struct BatchNormForward {
  const float *x, *gamma, *beta;
  float *moving_mean, *moving_var;
  float *y, *mean_out, *invstd_out;
  OpReq y_req, mean_req, invstd_req;
};

struct BatchNormBackward {
  const float *x, *gamma, *dy, *saved_mean, *saved_invstd, *moving_mean, *moving_var;
  float *dx, *dgamma, *dbeta;
  OpReq dx_req, dgamma_req, dbeta_req;
};

// False when oneDNN does not take the case (eps 0, where MXNet guards
// constant data differently).
bool batch_norm_forward(const BatchNormSpec& s, const BatchNormForward& a, const OpResources& res);
bool batch_norm_backward(const BatchNormSpec& s, const BatchNormBackward& a,
                         const OpResources& res);

}  // namespace mx::op::dnnl_impl
