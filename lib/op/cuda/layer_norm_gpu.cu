// GPU kernels of LayerNorm: one block per row runs the functions of
// layer_norm_kernels.h with the block's threads, summing their partial sums
// in shared memory; the block size follows the row length (a power of two
// from 32 to kBlockThreads), so short rows do not idle most of a block.
// The gamma and beta gradients: one thread per (chunk of rows, channel),
// neighbouring threads reading neighbouring channels, then one thread per
// channel adding the chunks in order.
#include "op/cuda/block_sum.cuh"
#include "op/cuda/sequence_gpu.h"
#include "op/nn/layer_norm_kernels.h"

namespace mx::op::cuda {
namespace {

// Enough blocks to fill any GPU; each block then strides over the rows.
constexpr int64_t kMaxRowBlocks = 65535;

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    layer_norm_forward_kernel(LayerNormForwardRow<T> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t t = threadIdx.x, threads = blockDim.x;
  for (int64_t row = blockIdx.x; row < f.view.rows(); row += gridDim.x) {
    double sum, sq;
    f.partial(row, t, threads, sum, sq);
    sum = block_sum(sum, shared);
    sq = block_sum(sq, shared);
    const LayerNormStats s = f.stats(row, sum, sq);
    if (t == 0) f.finish(row, s);
    f.apply(row, s, t, threads);
  }
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    layer_norm_data_grad_kernel(LayerNormBackwardRow<T> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t t = threadIdx.x, threads = blockDim.x;
  for (int64_t row = blockIdx.x; row < f.view.rows(); row += gridDim.x) {
    double sum_g, sum_gx;
    f.partial(row, t, threads, sum_g, sum_gx);
    sum_g = block_sum(sum_g, shared);
    sum_gx = block_sum(sum_gx, shared);
    f.apply(row, sum_g, sum_gx, t, threads);
  }
}

template <typename T>
__global__ void layer_norm_chunk_sums_kernel(LayerNormParamGrad<T> f, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f.sum_chunk(i);
}

template <typename T>
__global__ void layer_norm_param_finish_kernel(LayerNormParamGrad<T> f) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < f.view.channels;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x)
    f.finish(c);
}

// Threads per row block: the row length rounded up to a power of two,
// within [32, kBlockThreads].
unsigned row_threads(int64_t channels) {
  unsigned threads = 32;
  while (threads < kBlockThreads && threads < channels) threads *= 2;
  return threads;
}

unsigned row_blocks(int64_t rows) {
  return static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks);
}

}  // namespace

template <typename T>
void layer_norm_forward(const LayerNormForwardRow<T>& f, void* stream) {
  if (f.view.rows() <= 0) return;
  layer_norm_forward_kernel<T>
      <<<row_blocks(f.view.rows()), row_threads(f.view.channels), 0, stream_of(stream)>>>(f);
  check_launch("layer_norm_forward_kernel", "LayerNorm");
}

template <typename T>
void layer_norm_data_grad(const LayerNormBackwardRow<T>& f, void* stream) {
  if (f.view.rows() <= 0) return;
  layer_norm_data_grad_kernel<T>
      <<<row_blocks(f.view.rows()), row_threads(f.view.channels), 0, stream_of(stream)>>>(f);
  check_launch("layer_norm_data_grad_kernel", "LayerNorm");
}

template <typename T>
void layer_norm_param_grad(const LayerNormParamGrad<T>& f, void* stream) {
  if (f.view.channels <= 0) return;
  const int64_t n = f.chunks() * f.view.channels;
  if (n > 0) {
    layer_norm_chunk_sums_kernel<T><<<blocks_for(n), kBlockThreads, 0, stream_of(stream)>>>(f, n);
    check_launch("layer_norm_chunk_sums_kernel", "LayerNorm");
  }
  layer_norm_param_finish_kernel<T>
      <<<blocks_for(f.view.channels), kBlockThreads, 0, stream_of(stream)>>>(f);
  check_launch("layer_norm_param_finish_kernel", "LayerNorm");
}

template void layer_norm_forward<float>(const LayerNormForwardRow<float>&, void*);
template void layer_norm_forward<double>(const LayerNormForwardRow<double>&, void*);
template void layer_norm_data_grad<float>(const LayerNormBackwardRow<float>&, void*);
template void layer_norm_data_grad<double>(const LayerNormBackwardRow<double>&, void*);
template void layer_norm_param_grad<float>(const LayerNormParamGrad<float>&, void*);
template void layer_norm_param_grad<double>(const LayerNormParamGrad<double>&, void*);

}  // namespace mx::op::cuda
