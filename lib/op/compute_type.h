// The type kernels compute a stored element type in. The 16-bit float types
// of mixed precision are storage only: each value read is widened to float,
// computed on, and rounded once when stored. bfloat16 on the CPU is such a
// type; on the GPU float16 and bfloat16 (CUDA's __half and __nv_bfloat16)
// are too, added by op/cuda/device_value.cuh. The CPU's float16 (half_t)
// keeps its own arithmetic, as MXNet's CPU kernels compute it.
#pragma once

#include <type_traits>

#include "base/bfloat16.h"
#include "base/host_device.h"

namespace mx::op {

template <typename T>
struct IsLowFloat : std::false_type {};
template <>
struct IsLowFloat<bf16_t> : std::true_type {};

template <typename T>
inline constexpr bool is_low_float_v = IsLowFloat<T>::value;

// float for the storage-only 16-bit types, T otherwise.
template <typename T>
using KernelCompute = std::conditional_t<is_low_float_v<T>, float, T>;

// v as its compute type.
template <typename T>
MX_HOST_DEVICE KernelCompute<T> widen(T v) {
  return static_cast<KernelCompute<T>>(v);
}

}  // namespace mx::op
