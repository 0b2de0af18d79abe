#include "op/dnnl/dnnl_pooling.h"

#include <algorithm>
#include <array>

#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_descs.h"

namespace mx::op::dnnl_impl {
namespace {

using prop = dnnl::prop_kind;

std::string spec_key(const char* pass, const PoolSpec& s) {
  const Window2d& w = s.win;
  return make_key(pass, s.batch, s.channels, s.height, s.width, s.out_height, s.out_width,
                  w.kernel[0], w.kernel[1], w.stride[0], w.stride[1], w.pad[0], w.pad[1], s.max,
                  s.include_pad, static_cast<int>(s.dtype));
}

// Buffers of the repeated forward pass of a max-pooling backward.
std::byte* thread_buffer(size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace

PoolWindowDims pool_window_dims(const PoolSpec& s) {
  PoolWindowDims w;
  const std::array<int64_t, 2> in{s.height, s.width}, out{s.out_height, s.out_width};
  for (size_t d = 0; d < 2; ++d) {
    w.strides[d] = s.win.stride[d];
    w.kernel[d] = s.win.kernel[d];
    w.pad_l[d] = s.win.pad[d];
    w.pad_r[d] =
        std::max(w.pad_l[d], (out[d] - 1) * w.strides[d] + w.kernel[d] - in[d] - w.pad_l[d]);
  }
  return w;
}

// MXNet's and oneDNN's windows agree when no window lies wholly in the
// padding and, for an average over the padding, none reaches past it (the
// 'full' convention's last window), where MXNet divides by less than the
// kernel size.
bool pool_supported(const PoolSpec& s) {
  if (s.batch <= 0 || s.channels <= 0) return false;
  const PoolWindowDims d = pool_window_dims(s);
  for (size_t k = 0; k < 2; ++k) {
    if (d.pad_l[k] >= d.kernel[k] || d.pad_r[k] >= d.kernel[k]) return false;
    if (!s.max && s.include_pad && d.pad_r[k] > d.pad_l[k]) return false;
  }
  return true;
}

bool pool_forward(const PoolSpec& s, const void* x, void* y, OpReq req, const OpResources& res) {
  if (!pool_supported(s)) return false;
  if (req == OpReq::kNull) return true;
  auto step = cached_step(spec_key("pool_fwd", s), [&] {
    const PoolDescs d(s);
    auto pd = d.forward_pd(prop::forward_inference);
    return make_step(dnnl::pooling_forward(pd), pd,
                     {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_DST, d.dst, true}});
  });
  run(*step, {x, y}, {OpReq::kNull, req}, res);
  return true;
}

bool pool_backward(const PoolSpec& s, const void* x, const void* dy, void* dx, OpReq req,
                   const OpResources& res) {
  if (!pool_supported(s)) return false;
  if (req == OpReq::kNull) return true;
  if (!s.max) {
    auto step = cached_step(spec_key("pool_bwd", s), [&] {
      const PoolDescs d(s);
      dnnl::pooling_backward::desc desc(d.kind, d.src, d.dst, d.strides, d.kernel, d.pad_l,
                                        d.pad_r);
      dnnl::pooling_backward::primitive_desc pd(desc, scratch_attr(), cpu_engine(),
                                                d.forward_pd(prop::forward_training));
      return make_step(dnnl::pooling_backward(pd), pd,
                       {{DNNL_ARG_DIFF_DST, d.dst}, {DNNL_ARG_DIFF_SRC, d.src, true}});
    });
    run(*step, {dy, dx}, {OpReq::kNull, req}, res);
    return true;
  }
  // Max: forward in training mode for the workspace, then backward.
  const PoolDescs d(s);
  auto forward = cached_step(spec_key("pool_fwd_ws", s), [&] {
    auto pd = d.forward_pd(prop::forward_training);
    return make_step(dnnl::pooling_forward(pd), pd,
                     {{DNNL_ARG_SRC, d.src},
                      {DNNL_ARG_DST, d.dst, true},
                      {DNNL_ARG_WORKSPACE, pd.workspace_desc(), true}});
  });
  auto backward = cached_step(spec_key("pool_bwd_ws", s), [&] {
    auto fwd = d.forward_pd(prop::forward_training);
    dnnl::pooling_backward::desc desc(d.kind, d.src, d.dst, d.strides, d.kernel, d.pad_l, d.pad_r);
    dnnl::pooling_backward::primitive_desc pd(desc, scratch_attr(), cpu_engine(), fwd);
    return make_step(dnnl::pooling_backward(pd), pd,
                     {{DNNL_ARG_DIFF_DST, d.dst},
                      {DNNL_ARG_WORKSPACE, fwd.workspace_desc()},
                      {DNNL_ARG_DIFF_SRC, d.src, true}});
  });
  const size_t dst_bytes = d.dst.get_size();
  const size_t ws_bytes = forward->args[2].user.get_size();
  std::byte* buffer = thread_buffer(dst_bytes + ws_bytes + 64);
  std::byte* y = buffer;
  std::byte* ws = buffer + (dst_bytes + 63) / 64 * 64;
  run(*forward, {x, y, ws}, {OpReq::kNull, OpReq::kWrite, OpReq::kWrite}, res);
  run(*backward, {dy, ws, dx}, {OpReq::kNull, OpReq::kNull, req}, res);
  return true;
}

}  // namespace mx::op::dnnl_impl
