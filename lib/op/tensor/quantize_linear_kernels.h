// QuantizeLinear's per-element functor, run by its CPU kernel
// (quantize_linear.cc, through parallel_elements) and its GPU kernel
// (lib/op/cuda/quantize_linear_gpu.cu): one definition of the arithmetic
// for both devices, so the CPU tests check the code the GPU runs.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"
#include "op/tensor_ref.h"

namespace mx::op::kernels {

// y[i] = saturate(round_half_even(x[i] / scale[c]) + zero_point[c]) as ONNX's
// QuantizeLinear computes it, c the element's slice along the axis
// (`channels` slices of `inner` elements; one slice: per tensor). Q is
// uint8_t or int8_t, `low`/`high` its range. NaN, which has no quantized
// value, gives 0 (as mx's import quantizes a NaN constant).
template <typename Q>
struct QuantizeLinearForward {
  const float* x;
  const float* scale;
  const Q* zero_point;
  Q* y;
  int64_t inner, channels;
  float low, high;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t c = channels == 1 ? 0 : (i / inner) % channels;
    // rintf rounds half to even in the default rounding mode, on both devices.
    float q = rintf(x[i] / scale[c]) + static_cast<float>(zero_point[c]);
    if (!(q == q)) q = 0.0f;  // NaN
    q = q < low ? low : (q > high ? high : q);
    y[i] = static_cast<Q>(q);
  }
};

}  // namespace mx::op::kernels
