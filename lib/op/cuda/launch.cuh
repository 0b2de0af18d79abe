// Launching our own element-wise CUDA kernels. The per-element logic is a
// functor with an MX_HOST_DEVICE operator()(int64_t i) (in a *_kernels.h
// header that the CPU build compiles too); launch_elements runs it for every
// i in [0, n) with a grid-stride loop, for_each_element_host does the same
// on the CPU, which is how the CPU tests check the index arithmetic.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string_view>

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

template <typename F>
__global__ void elements_kernel(int64_t n, F f) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f(i);
}

// f(i) for i in [0, n) on `stream`; `where` names the operator in errors.
template <typename F>
void launch_elements(int64_t n, cudaStream_t stream, std::string_view where, F f) {
  if (n <= 0) return;
  elements_kernel<<<blocks_for(n), kBlockThreads, 0, stream>>>(n, f);
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
