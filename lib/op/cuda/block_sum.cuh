// The sum of one double per thread over a block, for kernels that reduce a
// segment per block (BatchNorm's channels, SoftmaxOutput's valid labels).
// blockDim.x must be a power of two no larger than kBlockThreads; every
// thread of the block must call it, and every thread gets the sum.
#pragma once

#include "op/cuda/launch.cuh"

namespace mx::op::cuda {

__device__ inline double block_sum(double value, double* shared) {
  const unsigned t = threadIdx.x;
  shared[t] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) shared[t] += shared[t + half];
    __syncthreads();
  }
  const double sum = shared[0];
  __syncthreads();  // shared[] may be reused at once
  return sum;
}

// The largest of one double per thread, combined as `combine(a, b)` (the
// operator's own choice between two values); the same rules as block_sum.
template <typename Combine>
__device__ inline double block_combine(double value, double* shared, Combine combine) {
  const unsigned t = threadIdx.x;
  shared[t] = value;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) shared[t] = combine(shared[t], shared[t + half]);
    __syncthreads();
  }
  const double result = shared[0];
  __syncthreads();
  return result;
}

}  // namespace mx::op::cuda
