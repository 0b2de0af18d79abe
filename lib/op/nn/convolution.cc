// Convolution and Deconvolution (1-D and 2-D, NCW/NCHW), MXNet's parameters
// and shape rules, on the im2col + GEMM engine of conv_util.h.
#include <algorithm>
#include <type_traits>

#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/nn/conv_util.h"
#include "op/nn/convolution_param.h"
#include "op/registry.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_convolution.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/cudnn_convolution.h"
#endif

namespace mx::op {
namespace {

using conv_decl::check_window;

std::vector<std::string> data_weight_bias(bool no_bias) {
  if (no_bias) return {"data", "weight"};
  return {"data", "weight", "bias"};
}

// The shape of `data` as far as it is known: rank from the window, channels
// and batch from the weight and the output.
Shape partial_data(const Shape& data, int rank) {
  require_ndim(data, rank, "input 'data'");
  return data.rank_known() ? data : Shape::filled(rank, -1);
}

bool any_known(const Shape& s) {
  for (int i = 0; i < s.ndim(); ++i)
    if (s[i] >= 0) return true;
  return false;
}

// What both operators infer alike: the rank of data, weight and output, the
// data's channels from the weight when the data does not say (a conflict is
// then reported on the weight) and its batch from the output, and the
// weight and bias shapes. A convolution's weight is (F, C / groups, kernel),
// a deconvolution's (`transposed`) (C, F / groups, kernel). Returns the
// data shape as far as it is known.
template <typename P>
Shape infer_data_weight_bias(const P& p, const Window2d& w, bool transposed, ShapeVector& in,
                             const ShapeVector& out) {
  const int rank = w.ndim + 2;
  Shape data = partial_data(in[0], rank);
  require_ndim(in[1], rank, "input 'weight'");
  require_ndim(out[0], rank, "output");
  if (data[1] < 0 && in[1].rank_known()) {
    if (!transposed && in[1][1] >= 0) data[1] = in[1][1] * p.num_group;
    if (transposed && in[1][0] >= 0) data[1] = in[1][0];
  }
  if (out[0].rank_known()) {
    Shape n = Shape::filled(rank, -1);
    n[0] = out[0][0];
    assign_shape(data, n, "input 'data' (batch from the output)");
  }
  const int64_t channels = data[1];
  if (channels >= 0 && channels % p.num_group != 0)
    throw ShapeError(
        str("input 'data' has ", channels, " channels, not divisible by num_group ", p.num_group));
  Shape weight = Shape::filled(rank, -1);
  if (transposed) {
    weight[0] = channels;
    weight[1] = p.num_filter / p.num_group;
  } else {
    weight[0] = p.num_filter;
    weight[1] = channels >= 0 ? channels / p.num_group : -1;
  }
  for (int d = 0; d < w.ndim; ++d) weight[2 + d] = p.kernel[d];
  assign_shape(in[1], weight, "input 'weight'");
  if (!p.no_bias) assign_shape(in[2], Shape{p.num_filter}, "input 'bias'");
  return data;
}

// The output, then the data as far as it is known.
void assign_output_and_data(ShapeVector& in, ShapeVector& out, const Shape& o, const Shape& data) {
  assign_shape(out[0], o, "output");
  if (in[0].rank_known() || any_known(data)) assign_shape(in[0], data, "input 'data'");
}

void infer_convolution(const ConvolutionParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Window2d w = check_window(p, "Convolution");
  const int rank = w.ndim + 2;
  const Shape data = infer_data_weight_bias(p, w, false, in, out);
  Shape o = Shape::filled(rank, -1);
  o[0] = data[0];
  o[1] = p.num_filter;
  for (int d = 0; d < w.ndim; ++d) {
    const int k = d + 2 - w.ndim;  // index into the 2-D window
    const int64_t size = data[2 + d];
    if (size < 0) continue;
    const int64_t padded = size + 2 * w.pad[k];
    if (w.dilated(k) > padded)
      throw ShapeError(str("kernel ", p.kernel.to_string(), " (dilated size ", w.dilated(k),
                           ") exceeds input 'data' ", data.to_string(), " padded to ", padded));
    o[2 + d] = (padded - w.dilated(k)) / w.stride[k] + 1;
  }
  assign_output_and_data(in, out, o, data);
}

std::pair<std::array<int64_t, 2>, std::array<int64_t, 2>> deconv_pad_adj(
    const DeconvolutionParam& p, const Window2d& w, const Shape& in) {
  const DeconvPadAdj r = op::deconv_pad_adj(w, p.adj, p.target_shape, in);
  return {r.pad, r.adj};
}

void infer_deconvolution(const DeconvolutionParam& p, ShapeVector& in, ShapeVector&,
                         ShapeVector& out) {
  const Window2d w = check_window(p, "Deconvolution");
  const int rank = w.ndim + 2;
  const Shape data = infer_data_weight_bias(p, w, true, in, out);
  auto [pad, adj] = deconv_pad_adj(p, w, data);
  Shape o = Shape::filled(rank, -1);
  o[0] = data[0];
  o[1] = p.num_filter;
  for (int d = 0; d < w.ndim; ++d) {
    const size_t k = static_cast<size_t>(d + 2 - w.ndim);
    if (adj[k] >= w.stride[k])
      throw ShapeError(str("adj ", adj[k], " must be smaller than stride ", w.stride[k]));
    const int64_t size = data[2 + d];
    if (size >= 0) {
      o[2 + d] = w.stride[k] * (size - 1) + w.dilated(static_cast<int>(k)) - 2 * pad[k] + adj[k];
      if (o[2 + d] <= 0)
        throw ShapeError(str("output size ", o[2 + d], " is not positive for input 'data' ",
                             data.to_string(), " and pad ", pad[k]));
      if (p.uses_target() && p.target_shape[d] > 0 && p.target_shape[d] != o[2 + d])
        throw ShapeError(str("target_shape ", p.target_shape.to_string(),
                             " cannot be reached from input 'data' ", data.to_string()));
    } else if (p.uses_target() && p.target_shape[d] > 0) {
      o[2 + d] = p.target_shape[d];
    }
  }
  assign_output_and_data(in, out, o, data);
}

ConvGeom convolution_geom(const ConvolutionParam& p, const Shape& data, const Shape& out) {
  return conv_geom(check_window(p, "Convolution"), p.num_group, data, data[1], out, p.num_filter);
}

ConvGeom deconvolution_geom(const DeconvolutionParam& p, const Shape& data, const Shape& out) {
  return op::deconvolution_geom(check_window(p, "Deconvolution"), p.adj, p.target_shape,
                                p.num_group, p.num_filter, data, out);
}

template <typename T>
const T* bias_of(bool no_bias, const std::vector<TensorRef>& inputs) {
  return no_bias ? nullptr : inputs[2].ptr<T>();
}

// The gradient of input i, or null when it is not requested (its array may
// then be absent).
template <typename T>
T* grad_of(const BackwardCall& c, size_t i) {
  return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>();
}

void convolution_forward_bf16([[maybe_unused]] const ConvolutionParam& p,
                              [[maybe_unused]] const ForwardCall& c) {
#if MX_USE_DNNL
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.outputs[0].shape);
  if (dnnl_enabled() &&
      dnnl_impl::conv_forward(g, c.inputs[0].data, c.inputs[1].data,
                              p.no_bias ? nullptr : c.inputs[2].data, c.outputs[0].data, c.req[0],
                              c.resources, std::nullopt, DType::kBFloat16))
    return;
#endif
  bf16_needs_dnnl("Convolution");
}

void convolution_backward_bf16([[maybe_unused]] const ConvolutionParam& p,
                               [[maybe_unused]] const BackwardCall& c) {
#if MX_USE_DNNL
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.out_grads[0].shape);
  auto grad = [&](size_t i) { return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].data; };
  const void* dy = c.out_grads[0].data;
  if (dnnl_enabled() &&
      dnnl_impl::conv_backward_weights(
          g, c.inputs[0].data, dy, grad(1), c.req[1], p.no_bias ? nullptr : grad(2),
          p.no_bias ? OpReq::kNull : c.req[2], c.resources, DType::kBFloat16) &&
      dnnl_impl::conv_backward_data(g, dy, c.inputs[1].data, grad(0), c.req[0], c.resources,
                                    DType::kBFloat16))
    return;
#endif
  bf16_needs_dnnl("Convolution");
}

template <typename T>
void convolution_forward(const ConvolutionParam& p, const ForwardCall& c) {
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.outputs[0].shape);
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() &&
        dnnl_impl::conv_forward(
            g, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), bias_of<T>(p.no_bias, c.inputs),
            c.outputs[0].ptr<T>(), c.req[0], c.resources,
            // Weights change every training step; in inference their reorder is kept.
            c.is_train ? std::nullopt : dnnl_impl::content_stamp(c.inputs[1])))
      return;
#endif
  conv_forward(g, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), bias_of<T>(p.no_bias, c.inputs),
               c.outputs[0].ptr<T>(), c.req[0], c.resources, workspace_bytes(p.workspace));
}

template <typename T>
void convolution_backward(const ConvolutionParam& p, const BackwardCall& c) {
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.out_grads[0].shape);
  const T* dy = c.out_grads[0].ptr<T>();
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    const T* x = c.inputs[0].ptr<T>();
    const T* w = c.inputs[1].ptr<T>();
    const size_t ws = workspace_bytes(p.workspace);
    if (dnnl_enabled() &&
        dnnl_impl::conv_backward_weights(g, x, dy, grad_of<T>(c, 1), c.req[1],
                                         p.no_bias ? nullptr : grad_of<T>(c, 2),
                                         p.no_bias ? OpReq::kNull : c.req[2], c.resources)) {
      // The data gradient on its own (oneDNN's or, where it does not take
      // the case, the reference kernel's).
      if (!dnnl_impl::conv_backward_data(g, dy, w, grad_of<T>(c, 0), c.req[0], c.resources))
        conv_backward<T>(g, x, dy, w, grad_of<T>(c, 0), c.req[0], nullptr, OpReq::kNull,
                         c.resources, ws);
      return;
    }
  }
#endif
  conv_backward(g, c.inputs[0].ptr<T>(), dy, c.inputs[1].ptr<T>(), grad_of<T>(c, 0), c.req[0],
                grad_of<T>(c, 1), c.req[1], c.resources, workspace_bytes(p.workspace));
  if (!p.no_bias) bias_gradient(dy, g.batch, g.filters, g.out_plane(), grad_of<T>(c, 2), c.req[2]);
}

template <typename T>
void deconvolution_forward(const DeconvolutionParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const ConvGeom g = deconvolution_geom(p, c.inputs[0].shape, c.outputs[0].shape);
  T* y = c.outputs[0].ptr<T>();
  // The deconvolution's output is the data gradient of the transposed convolution.
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() &&
        dnnl_impl::conv_backward_data(g, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), y, c.req[0],
                                      c.resources)) {
      if (!p.no_bias) add_bias(y, c.inputs[2].ptr<T>(), g.batch, g.channels, g.in_plane());
      return;
    }
#endif
  conv_backward<T>(g, nullptr, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), y,
                   c.req[0] == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite, nullptr, OpReq::kNull,
                   c.resources, workspace_bytes(p.workspace));
  if (!p.no_bias) add_bias(y, c.inputs[2].ptr<T>(), g.batch, g.channels, g.in_plane());
}

template <typename T>
void deconvolution_backward(const DeconvolutionParam& p, const BackwardCall& c) {
  const ConvGeom g = deconvolution_geom(p, c.inputs[0].shape, c.out_grads[0].shape);
  const T* dy = c.out_grads[0].ptr<T>();
  const size_t ws = workspace_bytes(p.workspace);
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() &&
        dnnl_impl::conv_forward(g, dy, c.inputs[1].ptr<T>(), nullptr, grad_of<T>(c, 0), c.req[0],
                                c.resources) &&
        dnnl_impl::conv_backward_weights(g, dy, c.inputs[0].ptr<T>(), grad_of<T>(c, 1), c.req[1],
                                         nullptr, OpReq::kNull, c.resources)) {
      if (!p.no_bias)
        bias_gradient(dy, g.batch, g.channels, g.in_plane(), grad_of<T>(c, 2), c.req[2]);
      return;
    }
#endif
  if (c.req[0] != OpReq::kNull)
    conv_forward<T>(g, dy, c.inputs[1].ptr<T>(), nullptr, grad_of<T>(c, 0), c.req[0], c.resources,
                    ws);
  conv_backward<T>(g, dy, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), nullptr, OpReq::kNull,
                   grad_of<T>(c, 1), c.req[1], c.resources, ws);
  if (!p.no_bias) bias_gradient(dy, g.batch, g.channels, g.in_plane(), grad_of<T>(c, 2), c.req[2]);
}

#if MX_USE_CUDA
cuda::AlgoPolicy algo_policy(CudnnTune tune) {
  switch (tune) {
    case CudnnTune::kOff: return cuda::AlgoPolicy::kHeuristic;
    case CudnnTune::kFastest: return cuda::AlgoPolicy::kFastest;
    case CudnnTune::kNone:
    case CudnnTune::kLimited: break;
  }
  return cuda::AlgoPolicy::kFitWorkspace;
}

// The cuDNN convolution of `g` for operator `op` with P's tuning parameters.
template <typename P>
cuda::CudnnConv cudnn_conv(const P& p, const ConvGeom& g, DType dtype, const char* op) {
  // float32, float64 and mixed precision's float16 and bfloat16.
  dispatch_real_amp(dtype, op, [](auto) {});
  return {g, dtype, algo_policy(p.cudnn_tune), workspace_bytes(p.workspace), op};
}

void* grad_ptr(const BackwardCall& c, size_t i) {
  return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].data;
}

void convolution_forward_gpu(const ConvolutionParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.outputs[0].shape);
  const DType dtype = c.inputs[0].dtype;
  const cuda::CudnnConv conv = cudnn_conv(p, g, dtype, "Convolution");
  void* y = c.outputs[0].data;
  cuda::cudnn_conv_forward(conv, c.rctx, c.resources, c.inputs[0].data, c.inputs[1].data, y,
                           c.req[0]);
  if (!p.no_bias)
    cuda::cudnn_add_bias("Convolution", dtype, c.rctx, c.inputs[2].data, y, g.batch, g.filters,
                         g.out_plane());
}

void convolution_backward_gpu(const ConvolutionParam& p, const BackwardCall& c) {
  const ConvGeom g = convolution_geom(p, c.inputs[0].shape, c.out_grads[0].shape);
  const DType dtype = c.inputs[0].dtype;
  const cuda::CudnnConv conv = cudnn_conv(p, g, dtype, "Convolution");
  const void* dy = c.out_grads[0].data;
  cuda::cudnn_conv_reserve(conv, {cuda::ConvPass::kBackwardData, cuda::ConvPass::kBackwardFilter},
                           c.rctx, c.resources);
  cuda::cudnn_conv_backward_data(conv, c.rctx, c.resources, dy, c.inputs[1].data, grad_ptr(c, 0),
                                 c.req[0]);
  cuda::cudnn_conv_backward_filter(conv, c.rctx, c.resources, c.inputs[0].data, dy, grad_ptr(c, 1),
                                   c.req[1]);
  if (!p.no_bias)
    cuda::cudnn_bias_gradient("Convolution", dtype, c.rctx, dy, g.batch, g.filters, g.out_plane(),
                              grad_ptr(c, 2), c.req[2]);
}

// The deconvolution's output is the data gradient of the transposed convolution.
void deconvolution_forward_gpu(const DeconvolutionParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const ConvGeom g = deconvolution_geom(p, c.inputs[0].shape, c.outputs[0].shape);
  const DType dtype = c.inputs[0].dtype;
  const cuda::CudnnConv conv = cudnn_conv(p, g, dtype, "Deconvolution");
  void* y = c.outputs[0].data;
  cuda::cudnn_conv_backward_data(conv, c.rctx, c.resources, c.inputs[0].data, c.inputs[1].data, y,
                                 c.req[0]);
  if (!p.no_bias)
    cuda::cudnn_add_bias("Deconvolution", dtype, c.rctx, c.inputs[2].data, y, g.batch, g.channels,
                         g.in_plane());
}

// Its data gradient is the transposed convolution's forward pass, its
// weight gradient that convolution's weight gradient with the roles of
// input and output swapped.
void deconvolution_backward_gpu(const DeconvolutionParam& p, const BackwardCall& c) {
  const ConvGeom g = deconvolution_geom(p, c.inputs[0].shape, c.out_grads[0].shape);
  const DType dtype = c.inputs[0].dtype;
  const cuda::CudnnConv conv = cudnn_conv(p, g, dtype, "Deconvolution");
  const void* dy = c.out_grads[0].data;
  cuda::cudnn_conv_reserve(conv, {cuda::ConvPass::kForward, cuda::ConvPass::kBackwardFilter},
                           c.rctx, c.resources);
  cuda::cudnn_conv_forward(conv, c.rctx, c.resources, dy, c.inputs[1].data, grad_ptr(c, 0),
                           c.req[0]);
  cuda::cudnn_conv_backward_filter(conv, c.rctx, c.resources, dy, c.inputs[0].data, grad_ptr(c, 1),
                                   c.req[1]);
  if (!p.no_bias)
    cuda::cudnn_bias_gradient("Deconvolution", dtype, c.rctx, dy, g.batch, g.channels, g.in_plane(),
                              grad_ptr(c, 2), c.req[2]);
}
#endif

// Each output element: (input channels / groups) * kernel multiply-adds.
double convolution_flops(const ConvolutionParam&, const ShapeVector& in, const ShapeVector& out) {
  if (in[1].ndim() < 3) return known_elements(out[0]);
  return 2.0 * known_elements(out[0]) * static_cast<double>(in[1].prod(1, in[1].ndim()));
}

// The transposed convolution: each input element is spread over
// (output channels / groups) * kernel outputs.
double deconvolution_flops(const DeconvolutionParam&, const ShapeVector& in, const ShapeVector&) {
  return 2.0 * known_elements(in[0]) * static_cast<double>(in[1].prod(1, in[1].ndim()));
}

}  // namespace

void register_convolution_ops(OpRegistry& r) {
  auto convolution = r.add<ConvolutionParam>("Convolution").amp(AmpClass::kLowPrecision);
  convolution
      .describe("1-D or 2-D convolution (NCW/NCHW) with groups, stride, dilation and padding.")
      .inputs([](const ConvolutionParam& p) { return data_weight_bias(p.no_bias); })
      .infer_shape(infer_convolution)
      .resource(ResourceKind::kTempSpace)
      .backward_uses(true, false)
      .expensive()
      .flops(convolution_flops)
      .inference_layer([](const ConvolutionParam& p, const ShapeVector& in,
                          const ShapeVector& out) -> std::optional<InferenceLayer> {
        if (in[0].ndim() != 4) return std::nullopt;
        InferenceLayer layer;
        layer.kind = LayerKind::kConvolution;
        layer.conv = convolution_geom(p, in[0], out[0]);
        layer.conv_bias = !p.no_bias;
        return layer;
      })
      .forward_cpu([](const ConvolutionParam& p, const ForwardCall& c) {
        if (c.inputs[0].dtype == DType::kBFloat16) return convolution_forward_bf16(p, c);
        dispatch_real(c.inputs[0].dtype, "Convolution",
                      [&](auto tag) { convolution_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const ConvolutionParam& p, const BackwardCall& c) {
        if (c.inputs[0].dtype == DType::kBFloat16) return convolution_backward_bf16(p, c);
        dispatch_real(c.inputs[0].dtype, "Convolution",
                      [&](auto tag) { convolution_backward<typename decltype(tag)::type>(p, c); });
      });

  auto deconvolution =
      r.add<DeconvolutionParam>("Deconvolution").amp(AmpClass::kFloat32);  // as MXNet's lists
  deconvolution
      .describe("1-D or 2-D transposed convolution (the gradient of Convolution as a layer).")
      .inputs([](const DeconvolutionParam& p) { return data_weight_bias(p.no_bias); })
      .infer_shape(infer_deconvolution)
      .resource(ResourceKind::kTempSpace)
      .backward_uses(true, false)
      .expensive()
      .flops(deconvolution_flops)
      .forward_cpu([](const DeconvolutionParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "Deconvolution",
                      [&](auto tag) { deconvolution_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const DeconvolutionParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "Deconvolution", [&](auto tag) {
          deconvolution_backward<typename decltype(tag)::type>(p, c);
        });
      });
#if MX_USE_CUDA
  convolution.forward(DeviceKind::kGPU, convolution_forward_gpu)
      .backward(DeviceKind::kGPU, convolution_backward_gpu);
  deconvolution.forward(DeviceKind::kGPU, deconvolution_forward_gpu)
      .backward(DeviceKind::kGPU, deconvolution_backward_gpu);
#endif
}

}  // namespace mx::op
