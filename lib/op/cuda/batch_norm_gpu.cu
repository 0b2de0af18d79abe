// GPU kernels of BatchNorm: one block per channel runs the functions of
// batch_norm_kernels.h with the block's threads, summing their partial sums
// in shared memory (two passes for the mean and the variance, as the CPU
// kernel does). Our own kernels rather than cuDNN's batch normalization:
// cuDNN moves the running variance with the unbiased variance, MXNet and
// the CPU kernel with the biased one, and cuDNN rejects eps below
// CUDNN_BN_MIN_EPSILON, which BatchNorm accepts.
#include "op/cuda/block_sum.cuh"
#include "op/cuda/nn_gpu.h"
#include "op/nn/batch_norm_kernels.h"

namespace mx::op::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    batch_norm_forward_kernel(BatchNormForwardChannel<T> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t ch = blockIdx.x;
  const int64_t t = threadIdx.x, threads = blockDim.x;
  double mean = 0, sq = 0;
  if (f.batch_stats) {
    mean = f.mean_of(block_sum(f.partial_sum(ch, t, threads), shared));
    sq = block_sum(f.partial_sq(ch, mean, t, threads), shared);
  }
  const BatchNormStats s = f.stats(ch, mean, sq);
  __syncthreads();  // every thread has read the moving statistics
  if (t == 0) f.finish(ch, s, sq);
  f.apply(ch, s, t, threads);
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    batch_norm_backward_kernel(BatchNormBackwardChannel<T> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t ch = blockIdx.x;
  const int64_t t = threadIdx.x, threads = blockDim.x;
  const BatchNormStats s = f.stats(ch);
  double sum_dy, dot;
  f.partial(ch, s.mean, t, threads, sum_dy, dot);
  sum_dy = block_sum(sum_dy, shared);
  dot = block_sum(dot, shared);
  if (t == 0) f.finish(ch, s, sum_dy, dot);
  f.apply(ch, s, sum_dy, dot, t, threads);
}

}  // namespace

template <typename T>
void batch_norm_forward(const BatchNormForwardChannel<T>& f, void* stream) {
  if (f.view.channels <= 0) return;
  batch_norm_forward_kernel<T>
      <<<static_cast<unsigned>(f.view.channels), kBlockThreads, 0, stream_of(stream)>>>(f);
  check_launch("batch_norm_forward_kernel", "BatchNorm");
}

template <typename T>
void batch_norm_backward(const BatchNormBackwardChannel<T>& f, void* stream) {
  if (f.view.channels <= 0) return;
  batch_norm_backward_kernel<T>
      <<<static_cast<unsigned>(f.view.channels), kBlockThreads, 0, stream_of(stream)>>>(f);
  check_launch("batch_norm_backward_kernel", "BatchNorm");
}

template void batch_norm_forward<float>(const BatchNormForwardChannel<float>&, void*);
template void batch_norm_forward<double>(const BatchNormForwardChannel<double>&, void*);
template void batch_norm_backward<float>(const BatchNormBackwardChannel<float>&, void*);
template void batch_norm_backward<double>(const BatchNormBackwardChannel<double>&, void*);

}  // namespace mx::op::cuda
