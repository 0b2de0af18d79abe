// oneDNN descriptors of mx's layer geometries, shared by the per-operator
// kernels and the fused inference graph (dnnl_inference_graph.h).
#pragma once

#include <algorithm>
#include <string>

#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_pooling.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/nn/conv_util.h"

namespace mx::op::dnnl_impl {

// Whether oneDNN's Winograd F(4x4, 3x3) convolution beats its direct one on
// this geometry, in every pass (forward, data and weights gradients). It
// computes 4x4 output tiles with 36 multiplications each instead of 144,
// but transforms the weights on every call: that costs the same for one
// tile as for many, so it pays off from about 32 tiles (measured on 2
// AVX-512 cores, 32 to 512 channels, batches 1 to 32: 2-2.3x faster at 64
// tiles and more, a loss below 16; docs/benchmarks.md). oneDNN's kernel
// takes channel counts in its blocks of 16.
inline int64_t winograd_tiles(const ConvGeom& g) {
  return g.batch * ((g.out_height + 3) / 4) * ((g.out_width + 3) / 4);
}
// The geometry oneDNN's Winograd kernels take: 3x3, stride 1, undilated,
// ungrouped, channel counts in its blocks of 16 (and at least 32).
inline bool winograd_geometry(const ConvGeom& g) {
  const Window2d& w = g.win;
  if (g.groups != 1 || w.kernel[0] != 3 || w.kernel[1] != 3 || w.stride[0] != 1 ||
      w.stride[1] != 1 || w.dilate[0] != 1 || w.dilate[1] != 1)
    return false;
  return g.channels % 16 == 0 && g.filters % 16 == 0 && g.channels >= 32 && g.filters >= 32;
}
inline bool winograd_wins(const ConvGeom& g) {
  return winograd_geometry(g) && winograd_tiles(g) >= 32;
}

// The same for inference, where oneDNN transforms the weights once and
// keeps them: nothing is paid per call, and its inference-only F(2x2, 3x3)
// kernel takes the few tiles of a small batch, so every tile count wins
// (ResNet-50 v2 at batch 1 in mx-predict, ONEDNN_VERBOSE=1: 64 channels at
// 56px 1.11 -> 0.65 ms, 128 at 28px 1.06 -> 0.66, 256 at 14px 1.05 -> 0.82,
// on 2 AVX-512 cores; docs/benchmarks.md). The kept weights take 1.8x
// (F(2x2)) to 4x (F(4x4)) the memory of the direct ones: above 4 MiB of
// direct weights (512 channels and filters) that is 17-38 MiB a layer
// instead of 9, for 1.4-2.2x on 2-3% of ResNet-50's time, so those stay
// direct.
inline constexpr size_t kWinogradKeptWeightsFrom = size_t{4} << 20;
inline bool winograd_wins_keeping_weights(const ConvGeom& g) {
  return winograd_geometry(g) &&
         static_cast<size_t>(g.weight_size()) * sizeof(float) <= kWinogradKeptWeightsFrom;
}

// The most scratch memory a Winograd primitive may ask for. Its scratchpad
// holds transformed weights and, for the weights gradient, a copy per
// thread: 120 MiB for a 512-channel layer on 2 threads, 624 MiB on 16. The
// operators' TempSpace grows to the largest request, so this bounds what
// Winograd adds to peak memory; a pass over it runs the direct algorithm.
inline constexpr size_t kWinogradScratchBytes = size_t{64} << 20;

// The memory descriptors of one convolution in mx's plain layouts (a 1-D
// convolution is a 2-D one of height 1).
struct ConvDescs {
  dims src, weights, bias, dst, strides, dilates, pad_l, pad_r;
  tag weights_tag;
  // The activations' layout: oneDNN's choice (`any`: blocks of 16 channels
  // on AVX-512), or nhwc where channel counts that are not multiples of 16
  // would be padded in those blocks (LeNet's 20 and 50 channels: conv2 ran
  // 30% faster in every pass in nhwc, docs/benchmarks.md). Image inputs of
  // 1 to 3 channels keep oneDNN's choice.
  tag activation_tag = tag::any;
  // Winograd where it wins and the switch allows it, else direct.
  dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct;
  // Every array's type: float32, or bfloat16 (float32 sums inside oneDNN).
  dnnl::memory::data_type dt = dnnl::memory::data_type::f32;

  // `keeps_weights`: for inference, where the weights are transformed once
  // and kept (winograd_wins_keeping_weights).
  explicit ConvDescs(const ConvGeom& g, bool keeps_weights = false, DType dtype = DType::kFloat32)
      : dt(dnnl_type(dtype)) {
    if (dnnl_winograd_enabled() && dnnl_winograd_available() &&
        (keeps_weights ? winograd_wins_keeping_weights(g) : winograd_wins(g)))
      algorithm = dnnl::algorithm::convolution_winograd;
    const Window2d& w = g.win;
    src = {g.batch, g.channels, g.height, g.width};
    dst = {g.batch, g.filters, g.out_height, g.out_width};
    bias = {g.filters};
    if (g.groups == 1) {
      weights = {g.filters, g.channels, w.kernel[0], w.kernel[1]};
      weights_tag = tag::oihw;
    } else {
      weights = {g.groups, g.filters / g.groups, g.channels / g.groups, w.kernel[0], w.kernel[1]};
      weights_tag = tag::goihw;
    }
    if (g.groups == 1 && g.channels >= 4 && (g.channels % 16 != 0 || g.filters % 16 != 0))
      activation_tag = tag::nhwc;
    strides = {w.stride[0], w.stride[1]};
    dilates = {w.dilate[0] - 1, w.dilate[1] - 1};
    pad_l = {w.pad[0], w.pad[1]};
    // The right padding that gives exactly the output size. The last window
    // may stop short of the data's edge (a strided 1x1 convolution of an
    // even size): oneDNN then takes 0, which gives the same output size
    // since it rounds the window count down.
    pad_r = {
        std::max<int64_t>(0, (g.out_height - 1) * w.stride[0] + w.dilated(0) - g.height - w.pad[0]),
        std::max<int64_t>(0, (g.out_width - 1) * w.stride[1] + w.dilated(1) - g.width - w.pad[1])};
  }

  // An activation (src or dst shape) in that layout.
  dnnl::memory::desc activation(const dims& shape) const {
    return activation_tag == tag::any ? any(shape, dt) : plain(shape, activation_tag, dt);
  }

  dnnl::convolution_forward::desc forward_desc(bool with_bias) const {
    constexpr auto pass = dnnl::prop_kind::forward_training;
    if (with_bias)
      return {pass,
              algorithm,
              activation(src),
              any(weights, dt),
              any(bias, dt),
              activation(dst),
              strides,
              dilates,
              pad_l,
              pad_r};
    return {pass,  algorithm, activation(src), any(weights, dt), activation(dst), strides, dilates,
            pad_l, pad_r};
  }
  dnnl::convolution_forward::primitive_desc forward_pd(bool with_bias) const {
    return {forward_desc(with_bias), scratch_attr(), cpu_engine()};
  }
};

// make(d)'s primitive descriptor, with the direct algorithm where d chose
// Winograd but oneDNN has no Winograd kernel for the case (its layouts or
// post-ops) or it would need more than kWinogradScratchBytes of scratch.
template <typename Make>
auto within_winograd_budget(ConvDescs d, Make make) {
  if (d.algorithm == dnnl::algorithm::convolution_winograd) {
    try {
      auto pd = make(d);
      if (pd.scratchpad_desc().get_size() <= kWinogradScratchBytes) return pd;
    } catch (const dnnl::error&) {
      // no Winograd kernel for this case
    }
    d.algorithm = dnnl::algorithm::convolution_direct;
  }
  return make(d);
}

// Whether oneDNN runs `pd` with its Winograd kernel.
inline bool is_winograd(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).find("wino") != std::string::npos;
}

// oneDNN takes every convolution mx's shape rules allow, with images.
inline bool conv_supported(const ConvGeom& g) { return g.batch > 0; }

// MXNet's max, average over the padding, or average over the data alone.
inline dnnl::algorithm pool_algorithm(const PoolSpec& s) {
  return s.max           ? dnnl::algorithm::pooling_max
         : s.include_pad ? dnnl::algorithm::pooling_avg_include_padding
                         : dnnl::algorithm::pooling_avg_exclude_padding;
}

// The descriptors of one pooling: mx's plain layouts, oneDNN's window.
struct PoolDescs {
  dnnl::memory::desc src, dst;
  dims strides, kernel, pad_l, pad_r;
  dnnl::algorithm kind;

  explicit PoolDescs(const PoolSpec& s)
      : src(plain({s.batch, s.channels, s.height, s.width}, tag::nchw, dnnl_type(s.dtype))),
        dst(plain({s.batch, s.channels, s.out_height, s.out_width}, tag::nchw, dnnl_type(s.dtype))),
        kind(pool_algorithm(s)) {
    const PoolWindowDims w = pool_window_dims(s);
    strides.assign(w.strides.begin(), w.strides.end());
    kernel.assign(w.kernel.begin(), w.kernel.end());
    pad_l.assign(w.pad_l.begin(), w.pad_l.end());
    pad_r.assign(w.pad_r.begin(), w.pad_r.end());
  }

  // The forward pass from `from` into `to` (mx's plain layouts by default).
  dnnl::pooling_forward::desc forward_desc(dnnl::prop_kind pass) const {
    return forward_desc(pass, src, dst);
  }
  dnnl::pooling_forward::desc forward_desc(dnnl::prop_kind pass, const dnnl::memory::desc& from,
                                           const dnnl::memory::desc& to) const {
    return {pass, kind, from, to, strides, kernel, pad_l, pad_r};
  }
  dnnl::pooling_forward::primitive_desc forward_pd(dnnl::prop_kind pass) const {
    return {forward_desc(pass), scratch_attr(), cpu_engine()};
  }
};

}  // namespace mx::op::dnnl_impl
