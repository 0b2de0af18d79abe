// The decisions of the cuDNN convolution that need no GPU, in plain C++ so
// that the CPU tests check them: the tensor and filter dims cuDNN sees for a
// convolution geometry (a 1-D convolution is a 2-D one of height 1), the key
// under which an algorithm is cached, and which measured or suggested
// algorithm is taken under MXNet's cudnn_tune policy.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/dtype.h"
#include "op/nn/conv_util.h"

namespace mx::op::cuda {

// One convolution as cuDNN describes it: x (N, C, H, W), w (K, C / groups,
// kh, kw), y (N, K, Ho, Wo), cross-correlation with symmetric padding.
struct CudnnConvShape {
  std::array<int64_t, 4> x{}, w{}, y{};
  std::array<int, 2> pad{}, stride{}, dilation{};
  int groups = 1;
};

// Throws naming `op` when a value does not fit cuDNN's int parameters.
CudnnConvShape cudnn_conv_shape(const ConvGeom& g, const char* op);

// cuDNN's output size of one spatial dim (cudnnGetConvolution2dForwardOutputDim):
// cuDNN checks that y has exactly these dims.
int64_t cudnn_conv_out_dim(int64_t in, int pad, int stride, int dilation, int64_t kernel);

enum class ConvPass { kForward, kBackwardData, kBackwardFilter };

// MXNet's cudnn_tune: 'off' takes cuDNN's heuristic order, 'None' and
// 'limited_workspace' the fastest measured algorithm within the workspace
// limit, 'fastest' the fastest measured regardless of workspace.
enum class AlgoPolicy { kHeuristic, kFitWorkspace, kFastest };

// The cache key of one pass of one convolution on one device.
std::string conv_algo_key(ConvPass pass, const CudnnConvShape& s, DType dtype, AlgoPolicy policy,
                          size_t workspace_limit, int device);

// A candidate as cuDNN reports it (cudnnConvolution*AlgoPerf_t): `ok` is
// status == CUDNN_STATUS_SUCCESS, `math_ok` that its math type is the one
// asked for (float32 must not run on TF32 tensor cores).
struct AlgoCandidate {
  int algo = 0;
  bool ok = false;
  bool math_ok = false;
  float time_ms = 0;
  size_t memory = 0;
};

// The index of the candidate to use, from a list in cuDNN's order (fastest
// first for a measured search, most promising first for the heuristic):
// the first usable one within `workspace_limit` (any size under kFastest);
// when none fits, the usable one needing the least workspace (the CPU also
// exceeds `workspace` rather than fail). nullopt when none is usable.
std::optional<size_t> pick_algo(const std::vector<AlgoCandidate>& candidates, AlgoPolicy policy,
                                size_t workspace_limit);

}  // namespace mx::op::cuda
