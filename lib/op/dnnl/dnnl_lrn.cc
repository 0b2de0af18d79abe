#include "op/dnnl/dnnl_lrn.h"

#include "op/dnnl/dnnl_context.h"

namespace mx::op::dnnl_impl {
namespace {

using prop = dnnl::prop_kind;
using algo = dnnl::algorithm;

dnnl::memory::desc data_desc(const LrnSpec& s) {
  return plain({s.batch, s.channels, s.height, s.width}, tag::nchw);
}

dnnl::lrn_forward::primitive_desc forward_pd(const LrnSpec& s, prop pass) {
  dnnl::lrn_forward::desc desc(pass, algo::lrn_across_channels, data_desc(s), s.nsize, s.alpha,
                               s.beta, s.knorm);
  return {desc, scratch_attr(), cpu_engine()};
}

std::string spec_key(const char* pass, const LrnSpec& s) {
  return make_key(pass, s.batch, s.channels, s.height, s.width, s.nsize, s.alpha, s.beta, s.knorm);
}

bool supported(const LrnSpec& s) {
  return s.nsize % 2 == 1 && s.batch * s.channels * s.height * s.width > 0;
}

std::byte* thread_buffer(size_t bytes) {
  thread_local std::vector<std::byte> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace

bool lrn_forward(const LrnSpec& s, const float* x, float* y, OpReq req, const OpResources& res) {
  if (!supported(s)) return false;
  if (req == OpReq::kNull) return true;
  auto step = cached_step(spec_key("lrn_fwd", s), [&] {
    auto pd = forward_pd(s, prop::forward_inference);
    return make_step(dnnl::lrn_forward(pd), pd,
                     {{DNNL_ARG_SRC, data_desc(s)}, {DNNL_ARG_DST, data_desc(s), true}});
  });
  run(*step, {x, y}, {OpReq::kNull, req}, res);
  return true;
}

bool lrn_backward(const LrnSpec& s, const float* x, const float* dy, float* dx, OpReq req,
                  const OpResources& res) {
  if (!supported(s)) return false;
  if (req == OpReq::kNull) return true;
  const dnnl::memory::desc data = data_desc(s);
  // The workspace (empty for some implementations) is known once the
  // forward step exists.
  auto forward = cached_step(spec_key("lrn_fwd_ws", s), [&] {
    auto pd = forward_pd(s, prop::forward_training);
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data, true}};
    if (pd.workspace_desc().get_size() > 0)
      args.push_back({DNNL_ARG_WORKSPACE, pd.workspace_desc(), true});
    return make_step(dnnl::lrn_forward(pd), pd, args);
  });
  const bool with_ws = forward->args.size() == 3;
  const dnnl::memory::desc ws = with_ws ? forward->args[2].user : dnnl::memory::desc();
  auto backward = cached_step(spec_key("lrn_bwd", s), [&] {
    dnnl::lrn_backward::desc desc(algo::lrn_across_channels, data, data, s.nsize, s.alpha, s.beta,
                                  s.knorm);
    auto fwd = forward_pd(s, prop::forward_training);
    dnnl::lrn_backward::primitive_desc pd(desc, scratch_attr(), cpu_engine(), fwd);
    std::vector<ArgSpec> args{{DNNL_ARG_SRC, data}, {DNNL_ARG_DIFF_DST, data}};
    if (with_ws) args.push_back({DNNL_ARG_WORKSPACE, fwd.workspace_desc()});
    args.push_back({DNNL_ARG_DIFF_SRC, data, true});
    return make_step(dnnl::lrn_backward(pd), pd, args);
  });
  const size_t dst_bytes = (data.get_size() + 63) / 64 * 64;
  std::byte* buffer = thread_buffer(dst_bytes + ws.get_size());
  if (with_ws) {
    run(*forward, {x, buffer, buffer + dst_bytes}, {OpReq::kNull, OpReq::kWrite, OpReq::kWrite},
        res);
    run(*backward, {x, dy, buffer + dst_bytes, dx}, {OpReq::kNull, OpReq::kNull, OpReq::kNull, req},
        res);
  } else {
    run(*backward, {x, dy, dx}, {OpReq::kNull, OpReq::kNull, req}, res);
  }
  return true;
}

}  // namespace mx::op::dnnl_impl
