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

}  // namespace mx::op::cuda
