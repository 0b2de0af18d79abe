// Element types as the GPU kernels store them: float16 is CUDA's __half (the
// CPU's half_t has host-only conversions), computed through float as on the
// CPU. Included by the .cu files whose functors live in *_kernels.h headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "base/dtype.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

template <>
struct HalfOps<__half> {
  static constexpr bool kIsHalf = true;
  MX_HOST_DEVICE static float to_float(__half v) { return __half2float(v); }
  MX_HOST_DEVICE static __half from_float(float v) { return __float2half_rn(v); }
};
template <>
struct HalfOps<__nv_bfloat16> {
  static constexpr bool kIsHalf = true;
  MX_HOST_DEVICE static float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
  MX_HOST_DEVICE static __nv_bfloat16 from_float(float v) { return __float2bfloat16_rn(v); }
};

}  // namespace mx::op::kernels

namespace mx::op::cuda {

template <typename T>
struct DeviceTypeOf {
  using type = T;
};
template <>
struct DeviceTypeOf<half_t> {
  using type = __half;
};
template <>
struct DeviceTypeOf<bf16_t> {
  using type = __nv_bfloat16;
};
// The device type of the C++ element type T (half_t -> __half, bf16_t -> __nv_bfloat16).
template <typename T>
using DeviceType = typename DeviceTypeOf<T>::type;

// A tensor's data as device elements of the C++ type T (dtype checked).
template <typename T>
DeviceType<T>* device_ptr(const TensorRef& t) {
  return reinterpret_cast<DeviceType<T>*>(t.ptr<T>());
}

}  // namespace mx::op::cuda
