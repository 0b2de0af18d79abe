#include "op/cuda/conv_algo.h"

#include <limits>

#include "base/error.h"

namespace mx::op::cuda {
namespace {

int to_int(int64_t value, const char* what, const char* op) {
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw Error(str(op, ": ", what, " ", value, " does not fit cuDNN's int parameters"));
  return static_cast<int>(value);
}

}  // namespace

CudnnConvShape cudnn_conv_shape(const ConvGeom& g, const char* op) {
  CudnnConvShape s;
  const Window2d& win = g.win;
  s.x = {g.batch, g.channels, g.height, g.width};
  s.w = {g.filters, g.groups > 0 ? g.channels / g.groups : 0, win.kernel[0], win.kernel[1]};
  s.y = {g.batch, g.filters, g.out_height, g.out_width};
  for (int d = 0; d < 2; ++d) {
    s.pad[d] = to_int(win.pad[d], "padding", op);
    s.stride[d] = to_int(win.stride[d], "stride", op);
    s.dilation[d] = to_int(win.dilate[d], "dilation", op);
  }
  s.groups = to_int(g.groups, "num_group", op);
  for (const auto* dims : {&s.x, &s.w, &s.y})
    for (int64_t v : *dims) to_int(v, "dimension", op);
  return s;
}

int64_t cudnn_conv_out_dim(int64_t in, int pad, int stride, int dilation, int64_t kernel) {
  return 1 + (in + 2 * pad - ((kernel - 1) * dilation + 1)) / stride;
}

std::string conv_algo_key(ConvPass pass, const CudnnConvShape& s, DType dtype, AlgoPolicy policy,
                          size_t workspace_limit, int device) {
  std::string key =
      str("pass=", static_cast<int>(pass), " dev=", device, " dtype=", dtype_name(dtype),
          " policy=", static_cast<int>(policy), " ws=", workspace_limit, " groups=", s.groups);
  for (const auto* dims : {&s.x, &s.w, &s.y}) {
    key += " |";
    for (int64_t v : *dims) key += str(" ", v);
  }
  for (const auto* p : {&s.pad, &s.stride, &s.dilation}) key += str(" | ", (*p)[0], " ", (*p)[1]);
  return key;
}

std::optional<size_t> pick_algo(const std::vector<AlgoCandidate>& candidates, AlgoPolicy policy,
                                size_t workspace_limit) {
  std::optional<size_t> smallest;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const AlgoCandidate& c = candidates[i];
    if (!c.ok || !c.math_ok) continue;
    if (policy == AlgoPolicy::kFastest || c.memory <= workspace_limit) return i;
    if (!smallest || c.memory < candidates[*smallest].memory) smallest = i;
  }
  return smallest;
}

}  // namespace mx::op::cuda
