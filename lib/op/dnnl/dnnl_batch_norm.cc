#include "op/dnnl/dnnl_batch_norm.h"

#include <cmath>

#include "op/dnnl/dnnl_context.h"

namespace mx::op::dnnl_impl {
namespace {

using prop = dnnl::prop_kind;
using flags = dnnl::normalization_flags;

struct BnDescs {
  dnnl::memory::desc data, vec;
  explicit BnDescs(const BatchNormSpec& s)
      : data(plain({s.outer, s.channels, s.inner, 1}, tag::nchw)),
        vec(plain({s.channels}, tag::x)) {}
};

flags stat_flags(const BatchNormSpec& s) {
  const flags f = flags::use_scale | flags::use_shift;
  return s.batch_stats ? f : f | flags::use_global_stats;
}

dnnl::batch_normalization_forward::primitive_desc forward_pd(const BatchNormSpec& s,
                                                             const BnDescs& d) {
  dnnl::batch_normalization_forward::desc desc(
      s.batch_stats ? prop::forward_training : prop::forward_inference, d.data, s.eps,
      stat_flags(s));
  return {desc, scratch_attr(), cpu_engine()};
}

std::string spec_key(const char* pass, const BatchNormSpec& s) {
  return make_key(pass, s.outer, s.channels, s.inner, s.eps, s.batch_stats);
}

// Per-channel buffers of one call: the scale (ones under fix_gamma) and the
// batch statistics or the variance rebuilt from the saved 1/sqrt(var + eps).
float* channel_buffers(int64_t channels, int count) {
  thread_local std::vector<float> buffer;
  buffer.resize(static_cast<size_t>(channels * count));
  return buffer.data();
}

}  // namespace

bool batch_norm_forward(const BatchNormSpec& s, const BatchNormForward& a, const OpResources& res) {
  if (s.eps <= 0 || s.outer * s.inner == 0) return false;
  auto step = cached_step(spec_key("bn_fwd", s), [&] {
    const BnDescs d(s);
    auto pd = forward_pd(s, d);
    const bool out_stats = s.batch_stats;
    return make_step(dnnl::batch_normalization_forward(pd), pd,
                     {{DNNL_ARG_SRC, d.data},
                      {DNNL_ARG_SCALE, d.vec},
                      {DNNL_ARG_SHIFT, d.vec},
                      {DNNL_ARG_MEAN, d.vec, out_stats},
                      {DNNL_ARG_VARIANCE, d.vec, out_stats},
                      {DNNL_ARG_DST, d.data, true}});
  });
  const int64_t C = s.channels;
  float* scratch = channel_buffers(C, 3);
  float *ones = scratch, *mean = scratch + C, *var = scratch + 2 * C;
  const float* scale = a.gamma;
  if (s.fix_gamma) {
    for (int64_t c = 0; c < C; ++c) ones[c] = 1.0f;
    scale = ones;
  }
  const float* mean_in = s.batch_stats ? mean : a.moving_mean;
  const float* var_in = s.batch_stats ? var : a.moving_var;
  const OpReq stat_req = s.batch_stats ? OpReq::kWrite : OpReq::kNull;
  run(*step, {a.x, scale, a.beta, mean_in, var_in, a.y},
      {OpReq::kNull, OpReq::kNull, OpReq::kNull, stat_req, stat_req, a.y_req}, res);
  const double momentum = s.momentum;
  for (int64_t c = 0; c < C; ++c) {
    if (s.batch_stats) {
      a.moving_mean[c] = static_cast<float>(a.moving_mean[c] * momentum + mean[c] * (1 - momentum));
      a.moving_var[c] = static_cast<float>(a.moving_var[c] * momentum + var[c] * (1 - momentum));
    }
    const double invstd = 1.0 / std::sqrt(static_cast<double>(var_in[c]) + s.eps);
    if (a.mean_req != OpReq::kNull) a.mean_out[c] = mean_in[c];
    if (a.invstd_req != OpReq::kNull) a.invstd_out[c] = static_cast<float>(invstd);
  }
  return true;
}

bool batch_norm_backward(const BatchNormSpec& s, const BatchNormBackward& a,
                         const OpResources& res) {
  if (s.eps <= 0 || s.outer * s.inner == 0) return false;
  auto step = cached_step(spec_key("bn_bwd", s), [&] {
    const BnDescs d(s);
    dnnl::batch_normalization_backward::desc desc(prop::backward, d.data, d.data, s.eps,
                                                  stat_flags(s));
    dnnl::batch_normalization_backward::primitive_desc pd(desc, scratch_attr(), cpu_engine(),
                                                          forward_pd(s, d));
    return make_step(dnnl::batch_normalization_backward(pd), pd,
                     {{DNNL_ARG_SRC, d.data},
                      {DNNL_ARG_DIFF_DST, d.data},
                      {DNNL_ARG_MEAN, d.vec},
                      {DNNL_ARG_VARIANCE, d.vec},
                      {DNNL_ARG_SCALE, d.vec},
                      // oneDNN 2.6 asks for the shift too, though it does not read it.
                      {DNNL_ARG_SHIFT, d.vec},
                      {DNNL_ARG_DIFF_SRC, d.data, true},
                      {DNNL_ARG_DIFF_SCALE, d.vec, true},
                      {DNNL_ARG_DIFF_SHIFT, d.vec, true}});
  });
  const int64_t C = s.channels;
  float* scratch = channel_buffers(C, 2);
  float *ones = scratch, *var = scratch + C;
  const float* scale = a.gamma;
  if (s.fix_gamma) {
    for (int64_t c = 0; c < C; ++c) ones[c] = 1.0f;
    scale = ones;
  }
  const float* mean = a.moving_mean;
  const float* variance = a.moving_var;
  if (s.batch_stats) {
    // var + eps = 1 / invstd^2, the value the forward pass normalized with.
    for (int64_t c = 0; c < C; ++c) {
      const double invstd = a.saved_invstd[c];
      var[c] = static_cast<float>(1.0 / (invstd * invstd) - s.eps);
    }
    mean = a.saved_mean;
    variance = var;
  }
  const OpReq dgamma_req = s.fix_gamma ? OpReq::kNull : a.dgamma_req;
  run(*step, {a.x, a.dy, mean, variance, scale, ones, a.dx, a.dgamma, a.dbeta},
      {OpReq::kNull, OpReq::kNull, OpReq::kNull, OpReq::kNull, OpReq::kNull, OpReq::kNull, a.dx_req,
       dgamma_req, a.dbeta_req},
      res);
  // fix_gamma: gamma's gradient is zero.
  if (s.fix_gamma && a.dgamma_req != OpReq::kNull && a.dgamma_req != OpReq::kAdd)
    for (int64_t c = 0; c < C; ++c) a.dgamma[c] = 0.0f;
  return true;
}

}  // namespace mx::op::dnnl_impl
