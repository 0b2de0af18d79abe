#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "base/error.h"
#include "ndarray/elementwise.h"

namespace mx {
namespace {

// On the device float16 and bfloat16 are computed as float, like on the CPU.
template <typename T>
struct DeviceValue {
  using type = T;
};
template <>
struct DeviceValue<half_t> {
  using type = __half;
};
template <>
struct DeviceValue<bf16_t> {
  using type = __nv_bfloat16;
};

template <typename T>
__device__ inline ComputeType<T> load(const typename DeviceValue<T>::type& v) {
  if constexpr (std::is_same_v<T, half_t>)
    return __half2float(v);
  else if constexpr (std::is_same_v<T, bf16_t>)
    return __bfloat162float(v);
  else
    return v;
}
template <typename T>
__device__ inline typename DeviceValue<T>::type store(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, half_t>)
    return __float2half(v);
  else if constexpr (std::is_same_v<T, bf16_t>)
    return __float2bfloat16(v);
  else
    return static_cast<T>(v);
}

template <typename T>
__global__ void binary_kernel(BinaryOp op, const typename DeviceValue<T>::type* a,
                              const typename DeviceValue<T>::type* b,
                              typename DeviceValue<T>::type* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = store<T>(apply_binary(op, load<T>(a[i]), load<T>(b[i])));
}

template <typename T>
__global__ void scalar_kernel(ScalarOp op, const typename DeviceValue<T>::type* a, ComputeType<T> s,
                              typename DeviceValue<T>::type* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = store<T>(apply_scalar(op, load<T>(a[i]), s));
}

template <typename T>
__global__ void fill_kernel(typename DeviceValue<T>::type* out, ComputeType<T> value, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = store<T>(value);
}

constexpr int kThreads = 256;
unsigned blocks_for(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

void check_launch(const char* what) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw Error(str("CUDA kernel ", what, " failed to launch: ", cudaGetErrorString(err)));
}

}  // namespace

void binary_kernel_gpu(BinaryOp op, DType dtype, const void* a, const void* b, void* out, int64_t n,
                       void* stream) {
  if (n == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using D = typename DeviceValue<T>::type;
    binary_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        op, static_cast<const D*>(a), static_cast<const D*>(b), static_cast<D*>(out), n);
  });
  check_launch("binary");
}

void scalar_kernel_gpu(ScalarOp op, DType dtype, const void* a, double s, void* out, int64_t n,
                       void* stream) {
  if (n == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using D = typename DeviceValue<T>::type;
    scalar_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        op, static_cast<const D*>(a), static_cast<ComputeType<T>>(s), static_cast<D*>(out), n);
  });
  check_launch("scalar");
}

void fill_kernel_gpu(DType dtype, void* out, double value, int64_t n, void* stream) {
  if (n == 0) return;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using D = typename DeviceValue<T>::type;
    fill_kernel<T><<<blocks_for(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<D*>(out), static_cast<ComputeType<T>>(value), n);
  });
  check_launch("fill");
}

}  // namespace mx
