#include "op/dnnl/dnnl_fully_connected.h"

#include "op/dnnl/dnnl_context.h"

namespace mx::op::dnnl_impl {
namespace {

using prop = dnnl::prop_kind;

// Plain layouts throughout in training: the weights are used as mx stores
// them, so no reorder runs per call (a GEMM-based inner product). In
// inference the weights are reordered once (a ContentStamp) into the blocked
// layout of oneDNN's brgemm kernel: ResNet-50's classifier (2048 -> 1000)
// at batch 16 took 3.2-3.7 ms on plain weights (GEMM), 0.5 ms on blocked
// ones (mx-predict, ONEDNN_VERBOSE=1).
struct FcDescs {
  dnnl::memory::desc src, weights, bias, dst;
  explicit FcDescs(const FcGeom& g)
      : src(plain({g.rows, g.features}, tag::nc, dnnl_type(g.dtype))),
        weights(plain({g.hidden, g.features}, tag::oi, dnnl_type(g.dtype))),
        bias(plain({g.hidden}, tag::x, dnnl_type(g.dtype))),
        dst(plain({g.rows, g.hidden}, tag::nc, dnnl_type(g.dtype))) {}

  dnnl::inner_product_forward::primitive_desc forward_pd(bool with_bias) const {
    auto desc =
        with_bias
            ? dnnl::inner_product_forward::desc(prop::forward_training, src, weights, bias, dst)
            : dnnl::inner_product_forward::desc(prop::forward_training, src, weights, dst);
    return {desc, scratch_attr(), cpu_engine()};
  }
  // Weights in the layout oneDNN picks, for inference.
  dnnl::inner_product_forward::primitive_desc inference_pd(bool with_bias) const {
    const dnnl::memory::desc blocked(weights.dims(), weights.data_type(), tag::any);
    auto desc =
        with_bias
            ? dnnl::inner_product_forward::desc(prop::forward_inference, src, blocked, bias, dst)
            : dnnl::inner_product_forward::desc(prop::forward_inference, src, blocked, dst);
    return {desc, scratch_attr(), cpu_engine()};
  }
};

std::string geom_key(const char* pass, const FcGeom& g) {
  return make_key(pass, g.rows, g.features, g.hidden, static_cast<int>(g.dtype));
}

}  // namespace

void fc_forward(const FcGeom& g, const void* x, const void* w, const void* bias, void* y, OpReq req,
                const OpResources& res, std::optional<ContentStamp> w_stamp) {
  if (req == OpReq::kNull) return;
  const bool with_bias = bias != nullptr;
  // A stamp comes with weights that stay as they are (inference).
  const bool keeps_weights = w_stamp.has_value();
  const char* pass =
      keeps_weights ? (with_bias ? "fc_inf_b" : "fc_inf") : (with_bias ? "fc_fwd_b" : "fc_fwd");
  auto step = cached_step(geom_key(pass, g), [&] {
    const FcDescs d(g);
    auto pd = keeps_weights ? d.inference_pd(with_bias) : d.forward_pd(with_bias);
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, d.src}, {DNNL_ARG_WEIGHTS, d.weights}};
    if (with_bias) args.push_back({DNNL_ARG_BIAS, d.bias});
    args.push_back({DNNL_ARG_DST, d.dst, true});
    return make_step(dnnl::inner_product_forward(pd), pd, args);
  });
  if (with_bias)
    run(*step, {x, w, bias, y}, {OpReq::kNull, OpReq::kNull, OpReq::kNull, req}, res,
        {std::nullopt, w_stamp});
  else
    run(*step, {x, w, y}, {OpReq::kNull, OpReq::kNull, req}, res, {std::nullopt, w_stamp});
}

void fc_backward(const FcGeom& g, const void* x, const void* w, const void* dy, void* dx,
                 OpReq dx_req, void* dw, OpReq dw_req, void* db, OpReq db_req,
                 const OpResources& res) {
  if (dx_req != OpReq::kNull) {
    auto step = cached_step(geom_key("fc_bwd_data", g), [&] {
      const FcDescs d(g);
      dnnl::inner_product_backward_data::desc desc(d.src, d.weights, d.dst);
      dnnl::inner_product_backward_data::primitive_desc pd(desc, scratch_attr(), cpu_engine(),
                                                           d.forward_pd(false));
      return make_step(dnnl::inner_product_backward_data(pd), pd,
                       {{DNNL_ARG_DIFF_DST, d.dst},
                        {DNNL_ARG_WEIGHTS, d.weights},
                        {DNNL_ARG_DIFF_SRC, d.src, true}});
    });
    run(*step, {dy, w, dx}, {OpReq::kNull, OpReq::kNull, dx_req}, res);
  }
  const bool with_bias = db != nullptr && db_req != OpReq::kNull;
  if (dw_req == OpReq::kNull && !with_bias) return;
  auto step = cached_step(geom_key(with_bias ? "fc_bwd_w_b" : "fc_bwd_w", g), [&] {
    const FcDescs d(g);
    auto desc = with_bias
                    ? dnnl::inner_product_backward_weights::desc(d.src, d.weights, d.bias, d.dst)
                    : dnnl::inner_product_backward_weights::desc(d.src, d.weights, d.dst);
    dnnl::inner_product_backward_weights::primitive_desc pd(desc, scratch_attr(), cpu_engine(),
                                                            d.forward_pd(with_bias));
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, d.src},
                              {DNNL_ARG_DIFF_DST, d.dst},
                              {DNNL_ARG_DIFF_WEIGHTS, d.weights, true}};
    if (with_bias) args.push_back({DNNL_ARG_DIFF_BIAS, d.bias, true});
    return make_step(dnnl::inner_product_backward_weights(pd), pd, args);
  });
  if (with_bias)
    run(*step, {x, dy, dw, db}, {OpReq::kNull, OpReq::kNull, dw_req, db_req}, res);
  else
    run(*step, {x, dy, dw}, {OpReq::kNull, OpReq::kNull, dw_req}, res);
}

}  // namespace mx::op::dnnl_impl
