// One Pooling call as a kernel runs it (NCHW; 1-D as height 1): plain data,
// shared by the oneDNN pooling kernels (op/dnnl/dnnl_pooling.h) and the
// fused inference graphs' layer description (op/inference_layer.h), so that
// neither the operators nor the graph passes include a oneDNN header for it.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "op/nn/conv_util.h"

namespace mx::op {

struct PoolSpec {
  int64_t batch = 0, channels = 0, height = 1, width = 1, out_height = 1, out_width = 1;
  Window2d win;
  bool max = true;
  bool include_pad = true;        // average: divide by the window clipped to data + padding
  DType dtype = DType::kFloat32;  // of x, y and their gradients
};

}  // namespace mx::op
