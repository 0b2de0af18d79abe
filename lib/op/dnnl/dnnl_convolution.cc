#include "op/dnnl/dnnl_convolution.h"

#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_descs.h"

namespace mx::op::dnnl_impl {
namespace {

std::string geom_key(const char* pass, const ConvGeom& g, DType dtype) {
  const Window2d& w = g.win;
  return make_key(pass, static_cast<int>(dtype), dnnl_winograd_enabled(), g.batch, g.channels,
                  g.height, g.width, g.filters, g.out_height, g.out_width, g.groups, w.kernel[0],
                  w.kernel[1], w.stride[0], w.stride[1], w.dilate[0], w.dilate[1], w.pad[0],
                  w.pad[1]);
}

}  // namespace

bool conv_forward(const ConvGeom& g, const void* x, const void* w, const void* bias, void* y,
                  OpReq req, const OpResources& res, std::optional<ContentStamp> w_stamp,
                  DType dtype) {
  if (!conv_supported(g)) return false;
  if (req == OpReq::kNull) return true;
  const bool with_bias = bias != nullptr;
  auto step = cached_step(geom_key(with_bias ? "conv_fwd_b" : "conv_fwd", g, dtype), [&] {
    const ConvDescs d(g, false, dtype);
    auto pd =
        within_winograd_budget(d, [&](const ConvDescs& c) { return c.forward_pd(with_bias); });
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, plain(d.src, tag::nchw, d.dt)},
                              {DNNL_ARG_WEIGHTS, plain(d.weights, d.weights_tag, d.dt)}};
    if (with_bias) args.push_back({DNNL_ARG_BIAS, plain(d.bias, tag::x, d.dt)});
    args.push_back({DNNL_ARG_DST, plain(d.dst, tag::nchw, d.dt), true});
    return make_step(dnnl::convolution_forward(pd), pd, args);
  });
  std::vector<const void*> buffers{x, w};
  std::vector<OpReq> reqs{OpReq::kNull, OpReq::kNull};
  if (with_bias) {
    buffers.push_back(bias);
    reqs.push_back(OpReq::kNull);
  }
  buffers.push_back(y);
  reqs.push_back(req);
  run(*step, buffers, reqs, res, {std::nullopt, w_stamp});
  return true;
}

bool conv_backward_data(const ConvGeom& g, const void* dy, const void* w, void* dx, OpReq req,
                        const OpResources& res, DType dtype) {
  // An image layer's data gradient (1 to 3 channels): oneDNN pads the
  // channels to its block of 16 and is slower than im2col (bench_ops), which
  // bfloat16 does not have.
  if (!conv_supported(g) || (dtype == DType::kFloat32 && g.channels / g.groups < 4)) return false;
  if (req == OpReq::kNull) return true;
  auto step = cached_step(geom_key("conv_bwd_data", g, dtype), [&] {
    const ConvDescs d(g, false, dtype);
    auto pd = within_winograd_budget(d, [](const ConvDescs& c) {
      return dnnl::convolution_backward_data::primitive_desc(
          {c.algorithm, c.activation(c.src), any(c.weights, c.dt), c.activation(c.dst), c.strides,
           c.dilates, c.pad_l, c.pad_r},
          scratch_attr(), cpu_engine(), c.forward_pd(false));
    });
    return make_step(dnnl::convolution_backward_data(pd), pd,
                     {{DNNL_ARG_DIFF_DST, plain(d.dst, tag::nchw, d.dt)},
                      {DNNL_ARG_WEIGHTS, plain(d.weights, d.weights_tag, d.dt)},
                      {DNNL_ARG_DIFF_SRC, plain(d.src, tag::nchw, d.dt), true}});
  });
  run(*step, {dy, w, dx}, {OpReq::kNull, OpReq::kNull, req}, res);
  return true;
}

bool conv_backward_weights(const ConvGeom& g, const void* x, const void* dy, void* dw, OpReq w_req,
                           void* db, OpReq b_req, const OpResources& res, DType dtype) {
  if (!conv_supported(g)) return false;
  const bool with_bias = db != nullptr && b_req != OpReq::kNull;
  if (w_req == OpReq::kNull && !with_bias) return true;
  auto step = cached_step(geom_key(with_bias ? "conv_bwd_w_b" : "conv_bwd_w", g, dtype), [&] {
    const ConvDescs d(g, false, dtype);
    auto pd = within_winograd_budget(d, [&](const ConvDescs& c) {
      auto desc =
          with_bias ? dnnl::convolution_backward_weights::desc(
                          c.algorithm, c.activation(c.src), any(c.weights, c.dt), any(c.bias, c.dt),
                          c.activation(c.dst), c.strides, c.dilates, c.pad_l, c.pad_r)
                    : dnnl::convolution_backward_weights::desc(
                          c.algorithm, c.activation(c.src), any(c.weights, c.dt),
                          c.activation(c.dst), c.strides, c.dilates, c.pad_l, c.pad_r);
      return dnnl::convolution_backward_weights::primitive_desc(desc, scratch_attr(), cpu_engine(),
                                                                c.forward_pd(with_bias));
    });
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, plain(d.src, tag::nchw, d.dt)},
                              {DNNL_ARG_DIFF_DST, plain(d.dst, tag::nchw, d.dt)},
                              {DNNL_ARG_DIFF_WEIGHTS, plain(d.weights, d.weights_tag, d.dt), true}};
    if (with_bias) args.push_back({DNNL_ARG_DIFF_BIAS, plain(d.bias, tag::x, d.dt), true});
    return make_step(dnnl::convolution_backward_weights(pd), pd, args);
  });
  std::vector<const void*> buffers{x, dy, dw};
  std::vector<OpReq> reqs{OpReq::kNull, OpReq::kNull, w_req};
  if (with_bias) {
    buffers.push_back(db);
    reqs.push_back(b_req);
  }
  run(*step, buffers, reqs, res);
  return true;
}

}  // namespace mx::op::dnnl_impl
