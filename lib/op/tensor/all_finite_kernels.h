// all_finite's test of one value, shared by its CPU kernel (all_finite.cc)
// and its GPU kernel (lib/op/cuda/all_finite_gpu.cu). 16-bit floats are
// widened to float, where an infinity or NaN stays one.
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/dtype.h"
#include "base/host_device.h"
#include "op/compute_type.h"

namespace mx::op::kernels {

// The element types all_finite reads: the floating ones.
template <typename T>
inline constexpr bool kFloatStorage = std::is_floating_point_v<T> || is_half_like_v<T>;

// x - x is 0 for a finite x and NaN for an infinity or a NaN (no library
// function, so the same code runs on both devices).
template <typename T>
MX_HOST_DEVICE bool finite_value(T v) {
  double d;
  if constexpr (std::is_same_v<T, half_t>)
    d = static_cast<float>(v);  // the CPU's float16 (the GPU's is __half)
  else
    d = static_cast<double>(widen(v));
  return d - d == 0.0;
}

}  // namespace mx::op::kernels
