// Per-element functors of the attention helpers' GPU kernels
// (attention_gpu.cu), run on the CPU by tests/op/test_sequence_kernels_host.cc:
// _contrib_div_sqrt_dim (and its gradient, the same map) multiplies by
// 1/sqrt(the last axis' length).
#pragma once

#include <cstdint>

#include "op/tensor_ref.h"

namespace mx::op {

template <typename T>
struct ScaleElements {
  const T* x;
  T* y;
  T scale;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(y + i, req, static_cast<T>(x[i] * scale));
  }
};

}  // namespace mx::op
