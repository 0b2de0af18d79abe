// Per-element logic of the operators that make arrays from their parameters
// (_zeros, _ones, _arange, _contrib_arange_like), shared by the CPU kernels
// (tensor/init_op.cc) and the GPU ones (op/cuda/tensor_gpu.cu).
#pragma once

#include <cstdint>
#include <type_traits>

#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// out[i] (req) value, the value given as a double and converted as Cast does.
template <typename T>
struct FillValue {
  T* out;
  double value;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    store_value(out + i, req, convert_value<T>(value));
  }
};

// start + k * step computed as MXNet's range kernel computes it: start and
// step converted to T first (an integer type truncates them), then the
// product and sum in T's arithmetic (float32 in float, integers in int64,
// wrapping into T; float16 through float).
template <typename T>
MX_HOST_DEVICE T arange_value(double start, double step, int64_t k) {
  const T s = convert_value<T>(start), d = convert_value<T>(step);
  if constexpr (HalfOps<T>::kIsHalf) {
    return HalfOps<T>::from_float(HalfOps<T>::to_float(s) +
                                  static_cast<float>(k) * HalfOps<T>::to_float(d));
  } else if constexpr (std::is_floating_point_v<T>) {
    return s + static_cast<T>(k) * d;
  } else {
    return static_cast<T>(static_cast<int64_t>(s) + k * static_cast<int64_t>(d));
  }
}

// out[i] (req) start + (i / repeat) * step.
template <typename T>
struct ArangeFill {
  T* out;
  double start, step;
  int64_t repeat;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    store_value(out + i, req, arange_value<T>(start, step, i / repeat));
  }
};

}  // namespace mx::op::kernels
