// Launching our own element-wise CUDA kernels. The per-element logic is a
// functor with an MX_HOST_DEVICE operator()(int64_t i) (in a *_kernels.h
// header that the CPU build compiles too); launch_elements runs it for every
// i in [0, n) with a grid-stride loop, for_each_element_host does the same
// on the CPU, which is how the CPU tests check the index arithmetic.
// A functor that splits reading from writing (`load(i)` returns what element
// i needs, `store(i, loaded)` writes it; operator() is store(i, load(i)))
// runs four elements a thread, the four loads issued before any store: a
// thread then has four loads in flight instead of one (the compiler may not
// move a load above a store that could alias it), which is what brings a
// streaming kernel near the memory's bandwidth.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "base/dtype.h"
#include "base/error.h"
#include "base/strings.h"
#include "op/cuda/cuda_check.h"

namespace mx::op::cuda {

inline constexpr int kBlockThreads = 256;
// Enough blocks to fill any current GPU; the grid-stride loop covers the rest.
inline constexpr int64_t kMaxBlocks = 65535;

inline unsigned blocks_for(int64_t n, int threads = kBlockThreads) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + threads - 1) / threads, 1, kMaxBlocks));
}

inline constexpr int kLoadsInFlight = 4;

// Whether F has load(i) and store(i, loaded).
template <typename F, typename = void>
struct SplitsLoads : std::false_type {};
template <typename F>
struct SplitsLoads<F, std::void_t<decltype(std::declval<const F&>().load(int64_t{}))>>
    : std::true_type {};

// store(i, load(i)) for i = begin + k * stride < end, kLoadsInFlight elements
// a round, all of a round's loads before its stores.
template <typename Load, typename Store>
__device__ void each_element(int64_t begin, int64_t end, int64_t stride, Load load, Store store) {
  for (int64_t i = begin; i < end; i += kLoadsInFlight * stride) {
    decltype(load(i)) v[kLoadsInFlight];
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * stride < end) v[k] = load(i + k * stride);
#pragma unroll
    for (int k = 0; k < kLoadsInFlight; ++k)
      if (i + k * stride < end) store(i + k * stride, v[k]);
  }
}

template <typename F>
__global__ void elements_kernel(int64_t n, F f) {
  const int64_t first = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  if constexpr (SplitsLoads<F>::value) {
    each_element(
        first, n, stride, [&](int64_t i) { return f.load(i); },
        [&](int64_t i, const auto& loaded) { f.store(i, loaded); });
  } else {
    for (int64_t i = first; i < n; i += stride) f(i);
  }
}

// f(i) for i in [0, n) on `stream`; `where` names the operator in errors.
template <typename F>
void launch_elements(int64_t n, cudaStream_t stream, std::string_view where, F f) {
  if (n <= 0) return;
  const int64_t threads = SplitsLoads<F>::value ? (n + kLoadsInFlight - 1) / kLoadsInFlight : n;
  elements_kernel<<<blocks_for(threads), kBlockThreads, 0, stream>>>(n, f);
  check_launch("elements_kernel", where);
}

inline cudaStream_t stream_of(void* stream) { return static_cast<cudaStream_t>(stream); }

// fn(T{}) with T float or double, for kernels written for those two only
// (LRN, Pooling); any other dtype is refused naming the operator.
template <typename Fn>
void dispatch_float_or_double(DType dtype, const char* op, Fn&& fn) {
  if (dtype == DType::kFloat32) return fn(float{});
  if (dtype == DType::kFloat64) return fn(double{});
  throw Error(str(op, " supports float32 and float64, not ", dtype_name(dtype)));
}

}  // namespace mx::op::cuda
