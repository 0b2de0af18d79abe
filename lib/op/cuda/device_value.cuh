// Element types as the GPU kernels store them: float16 is CUDA's __half (the
// CPU's half_t has host-only conversions), computed through float as on the
// CPU. Included by the .cu files whose functors live in *_kernels.h headers.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstring>
#include <type_traits>

#include "base/dtype.h"
#include "base/error.h"
#include "base/strings.h"
#include "op/compute_type.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op {

// CUDA's 16-bit float types are storage only: the kernels compute them in float.
template <>
struct IsLowFloat<__half> : std::true_type {};
template <>
struct IsLowFloat<__nv_bfloat16> : std::true_type {};

}  // namespace mx::op

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

// Host pointers and values of the C++ type T as the device type's: the same
// bits (half_t and __half, bf16_t and __nv_bfloat16 are both 16-bit floats).
template <typename T>
const DeviceType<T>* device_ptr(const T* p) {
  return reinterpret_cast<const DeviceType<T>*>(p);
}
template <typename T>
DeviceType<T>* device_ptr(T* p) {
  return reinterpret_cast<DeviceType<T>*>(p);
}
template <typename T>
DeviceType<T> device_value(T v) {
  static_assert(sizeof(DeviceType<T>) == sizeof(T));
  DeviceType<T> d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}

// fn(T{}) with T the device type of a real dtype: float, double, __half or
// __nv_bfloat16, for the kernels of operators that run in mixed precision.
template <typename Fn>
void dispatch_device_real(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(float{});
    case DType::kFloat64: return fn(double{});
    case DType::kFloat16: return fn(__half{});
    case DType::kBFloat16: return fn(__nv_bfloat16{});
    default: break;
  }
  throw Error(str(op, " supports float32, float64, float16 and bfloat16, not ", dtype_name(dtype)));
}

// A functor written over a host element type (F<half_t>, F<bf16_t>; the
// operators' .cc files build them without CUDA's headers) as the same
// functor over the device type (F<__half>, F<__nv_bfloat16>): its members
// are pointers, enums and scalars, so both are the same bytes. Functors of
// other types pass through.
template <typename F>
struct OnDevice {
  using type = F;
};
template <template <typename> class F, typename T>
struct OnDevice<F<T>> {
  using type = F<DeviceType<T>>;
};
// Functors of (data type, parameter type): the data's type is mapped.
template <template <typename, typename> class F, typename T, typename P>
struct OnDevice<F<T, P>> {
  using type = F<DeviceType<T>, P>;
};
template <typename F>
typename OnDevice<F>::type on_device(const F& f) {
  using D = typename OnDevice<F>::type;
  if constexpr (std::is_same_v<D, F>) {
    return f;
  } else {
    static_assert(sizeof(D) == sizeof(F) && std::is_trivially_copyable_v<F>);
    D d;
    std::memcpy(static_cast<void*>(&d), &f, sizeof d);
    return d;
  }
}

}  // namespace mx::op::cuda
