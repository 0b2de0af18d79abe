// GPU kernels of BatchNorm (the functions of batch_norm_kernels.h). Each
// channel's elements are reduced in `splits` parts, one block each, so that
// a layer with few channels and many elements (ResNet's first stages: 64
// channels of 200,000 elements at batch 64) keeps every multiprocessor
// busy; one thread per channel then combines its parts in a fixed order (the
// results do not depend on timing), and the output is written plane by plane
// (one block row per (outer, channel) plane, so that no thread divides to find
// its channel). The forward pass reads the data twice: once for both sums
// (shifted, batch_norm_kernels.h), once to write the output. The parts live
// in the operator's TempSpace.
// Our own kernels rather than cuDNN's batch normalization: cuDNN moves the
// running variance with the unbiased variance, MXNet and the CPU kernel with
// the biased one, and cuDNN rejects eps below CUDNN_BN_MIN_EPSILON, which
// BatchNorm accepts.
#include <algorithm>

#include "op/cuda/block_sum.cuh"
#include "op/cuda/cuda_check.h"
#include "op/cuda/device_value.cuh"
#include "op/cuda/nn_gpu.h"
#include "op/nn/batch_norm_kernels.h"

namespace mx::op::cuda {
namespace {

constexpr const char* kWhere = "BatchNorm";

// Splits per channel: about 1024 blocks in all, each with at least four
// elements per thread, at most 64 parts.
int64_t splits_for(const BatchNormView& view) {
  const int64_t by_blocks = (1024 + view.channels - 1) / view.channels;
  const int64_t by_work = view.count() / (4 * kBlockThreads);
  return std::clamp<int64_t>(std::min(by_blocks, by_work), 1, 64);
}

// The sum of a channel's parts, in order.
__device__ double sum_parts(const double* parts, int64_t ch, int64_t splits) {
  double s = 0;
  for (int64_t k = 0; k < splits; ++k) s += parts[ch * splits + k];
  return s;
}

// Block (split, channel): its parts of the channel's shifted sums.
template <typename F>
__global__ void __launch_bounds__(kBlockThreads)
    bn_stats_parts(F f, int64_t splits, double* s1s, double* s2s) {
  __shared__ double shared[kBlockThreads];
  const int64_t split = blockIdx.x, ch = blockIdx.y;
  double s1, s2;
  f.partial_sums(ch, f.shift_of(ch), split, splits, threadIdx.x, blockDim.x, s1, s2);
  s1 = block_sum(s1, shared);
  s2 = block_sum(s2, shared);
  if (threadIdx.x == 0) {
    s1s[ch * splits + split] = s1;
    s2s[ch * splits + split] = s2;
  }
}

// One thread per channel: statistics, moving and saved statistics, and the
// channel's scale and shift (as doubles holding values of the compute type).
template <typename F>
__global__ void bn_forward_finish(F f, int64_t splits, const double* s1s, const double* s2s,
                                  double* scale_shift) {
  const int64_t ch = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ch >= f.view.channels) return;
  double mean = 0, sq = 0;
  if (f.batch_stats)
    f.mean_and_sq(f.shift_of(ch), sum_parts(s1s, ch, splits), sum_parts(s2s, ch, splits), mean, sq);
  const BatchNormStats s = f.stats(ch, mean, sq);
  f.finish(ch, s, sq);
  typename F::C scale, shift;
  f.scale_shift(ch, s, scale, shift);
  scale_shift[2 * ch] = scale;
  scale_shift[2 * ch + 1] = shift;
}

// How the element-wise passes cover the data: by planes (blockIdx.x the
// plane, blockIdx.y and the threads along it; no division per element)
// where planes hold at least a warp's elements, else a grid-stride loop
// over all elements.
struct ApplyLaunch {
  bool by_plane = false;
  dim3 grid;
  unsigned threads = kBlockThreads;
};

ApplyLaunch apply_launch(const BatchNormView& v) {
  ApplyLaunch l;
  const int64_t planes = v.outer * v.channels;
  if (v.inner < 32 || planes > 0x7fffffffLL) {
    l.grid = dim3(blocks_for((v.count() * v.channels + kLoadsInFlight - 1) / kLoadsInFlight));
    return l;
  }
  l.by_plane = true;
  const int64_t per_round = (v.inner + kLoadsInFlight - 1) / kLoadsInFlight;
  l.threads =
      static_cast<unsigned>(std::clamp<int64_t>((per_round + 31) / 32 * 32, 32, kBlockThreads));
  const int64_t along = std::min<int64_t>((per_round + l.threads - 1) / l.threads, 65535);
  l.grid = dim3(static_cast<unsigned>(planes), static_cast<unsigned>(along));
  return l;
}

// The element range [begin, end) and stride of this thread's elements in
// its block's plane.
struct PlaneRange {
  int64_t plane, begin, end, stride;
};

__device__ PlaneRange plane_range(const BatchNormView& v) {
  const int64_t plane = blockIdx.x;
  return {plane, plane * v.inner + blockIdx.y * static_cast<int64_t>(blockDim.x) + threadIdx.x,
          (plane + 1) * v.inner, static_cast<int64_t>(gridDim.y) * blockDim.x};
}

__device__ int64_t grid_thread() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <typename F>
__global__ void __launch_bounds__(kBlockThreads)
    bn_forward_apply_planes(F f, const double* scale_shift) {
  using C = typename F::C;
  const PlaneRange r = plane_range(f.view);
  const int64_t ch = r.plane % f.view.channels;
  const C scale = static_cast<C>(scale_shift[2 * ch]),
          shift = static_cast<C>(scale_shift[2 * ch + 1]);
  each_element(
      r.begin, r.end, r.stride, [&](int64_t i) { return f.x[i]; },
      [&](int64_t i, typename F::Data xi) { f.apply(i, xi, scale, shift); });
}

template <typename F>
__global__ void __launch_bounds__(kBlockThreads) bn_forward_apply(F f, const double* scale_shift) {
  using C = typename F::C;
  each_element(
      grid_thread(), f.view.count() * f.view.channels, grid_threads(),
      [&](int64_t i) { return f.x[i]; },
      [&](int64_t i, typename F::Data xi) {
        const int64_t ch = f.view.channel_of(i);
        f.apply(i, xi, static_cast<C>(scale_shift[2 * ch]),
                static_cast<C>(scale_shift[2 * ch + 1]));
      });
}

// x and dy of one element.
template <typename T>
struct XDy {
  T x, dy;
};

// Block (split, channel): its parts of sum(dy) and sum((x - mean) * dy).
template <typename F>
__global__ void __launch_bounds__(kBlockThreads)
    bn_backward_parts(F f, int64_t splits, double* dys, double* dots) {
  __shared__ double shared[kBlockThreads];
  const int64_t split = blockIdx.x, ch = blockIdx.y;
  double sum_dy, dot;
  f.partial(ch, f.stats(ch).mean, split, splits, threadIdx.x, blockDim.x, sum_dy, dot);
  sum_dy = block_sum(sum_dy, shared);
  dot = block_sum(dot, shared);
  if (threadIdx.x == 0) {
    dys[ch * splits + split] = sum_dy;
    dots[ch * splits + split] = dot;
  }
}

// One thread per channel: the parameter gradients and what the data
// gradient needs.
template <typename F>
__global__ void bn_backward_finish(F f, int64_t splits, const double* dys, const double* dots,
                                   BatchNormDataGrad* g) {
  const int64_t ch = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ch >= f.view.channels) return;
  const double sum_dy = sum_parts(dys, ch, splits), dot = sum_parts(dots, ch, splits);
  const BatchNormStats s = f.stats(ch);
  f.finish(ch, s, sum_dy, dot);
  g[ch] = f.data_grad(ch, s, sum_dy, dot);
}

template <typename F>
__global__ void __launch_bounds__(kBlockThreads)
    bn_backward_apply(F f, const BatchNormDataGrad* g) {
  using T = typename F::Data;
  each_element(
      grid_thread(), f.view.count() * f.view.channels, grid_threads(),
      [&](int64_t i) {
        return XDy<T>{f.x[i], f.dy[i]};
      },
      [&](int64_t i, XDy<T> v) { f.apply(i, v.x, v.dy, g[f.view.channel_of(i)]); });
}

template <typename F>
__global__ void __launch_bounds__(kBlockThreads)
    bn_backward_apply_planes(F f, const BatchNormDataGrad* g) {
  using T = typename F::Data;
  const PlaneRange r = plane_range(f.view);
  const BatchNormDataGrad grad = g[r.plane % f.view.channels];
  each_element(
      r.begin, r.end, r.stride,
      [&](int64_t i) {
        return XDy<T>{f.x[i], f.dy[i]};
      },
      [&](int64_t i, XDy<T> v) { f.apply(i, v.x, v.dy, grad); });
}

// The element-wise pass of f with its per-channel values: by planes or by a
// grid-stride loop, as apply_launch chooses.
template <typename F, typename P>
void launch_apply(const F& f, const P* per_channel, void (*by_plane)(F, const P*),
                  void (*flat)(F, const P*), const char* name, cudaStream_t s) {
  const ApplyLaunch l = apply_launch(f.view);
  const auto kernel = l.by_plane ? by_plane : flat;
  kernel<<<l.grid, l.threads, 0, s>>>(f, per_channel);
  check_launch(name, kWhere);
}

unsigned channel_blocks(int64_t channels) {
  return static_cast<unsigned>((channels + kBlockThreads - 1) / kBlockThreads);
}

dim3 part_grid(const BatchNormView& view, int64_t splits) {
  return dim3(static_cast<unsigned>(splits), static_cast<unsigned>(view.channels));
}

template <typename F>
void forward_on_device(const F& f, void* workspace, void* stream) {
  if (f.view.channels <= 0) return;
  const cudaStream_t s = stream_of(stream);
  const int64_t splits = splits_for(f.view), channels = f.view.channels;
  double* s1s = static_cast<double*>(workspace);
  double* s2s = s1s + channels * splits;
  double* scale_shift = s2s + channels * splits;
  if (f.batch_stats && f.view.count() > 0) {
    bn_stats_parts<F><<<part_grid(f.view, splits), kBlockThreads, 0, s>>>(f, splits, s1s, s2s);
    check_launch("bn_stats_parts", kWhere);
  } else {
    MX_CUDA_CHECK(cudaMemsetAsync(s1s, 0, 2 * channels * splits * sizeof(double), s), kWhere);
  }
  bn_forward_finish<F>
      <<<channel_blocks(channels), kBlockThreads, 0, s>>>(f, splits, s1s, s2s, scale_shift);
  check_launch("bn_forward_finish", kWhere);
  if (f.req_y != OpReq::kNull && f.view.count() > 0) {
    launch_apply(f, static_cast<const double*>(scale_shift), bn_forward_apply_planes<F>,
                 bn_forward_apply<F>, "bn_forward_apply", s);
  }
}

template <typename F>
void backward_on_device(const F& f, void* workspace, void* stream) {
  if (f.view.channels <= 0) return;
  const cudaStream_t s = stream_of(stream);
  const int64_t splits = splits_for(f.view), channels = f.view.channels;
  double* dys = static_cast<double*>(workspace);
  double* dots = dys + channels * splits;
  auto* grads = reinterpret_cast<BatchNormDataGrad*>(dots + channels * splits);
  if (f.view.count() > 0) {
    bn_backward_parts<F><<<part_grid(f.view, splits), kBlockThreads, 0, s>>>(f, splits, dys, dots);
    check_launch("bn_backward_parts", kWhere);
  } else {
    MX_CUDA_CHECK(cudaMemsetAsync(dys, 0, 2 * channels * splits * sizeof(double), s), kWhere);
  }
  bn_backward_finish<F>
      <<<channel_blocks(channels), kBlockThreads, 0, s>>>(f, splits, dys, dots, grads);
  check_launch("bn_backward_finish", kWhere);
  if (f.req_dx != OpReq::kNull && f.view.count() > 0) {
    launch_apply(f, static_cast<const BatchNormDataGrad*>(grads), bn_backward_apply_planes<F>,
                 bn_backward_apply<F>, "bn_backward_apply", s);
  }
}

}  // namespace

size_t batch_norm_workspace_bytes(const BatchNormView& view) {
  static_assert(sizeof(BatchNormDataGrad) % sizeof(double) == 0);
  // Two sums per part, then per channel: scale and shift, or BatchNormDataGrad.
  const int64_t per_channel = std::max<int64_t>(2, sizeof(BatchNormDataGrad) / sizeof(double));
  return static_cast<size_t>(view.channels * (2 * splits_for(view) + per_channel)) * sizeof(double);
}

template <typename T, typename P>
void batch_norm_forward(const BatchNormForwardChannel<T, P>& f, void* workspace, void* stream) {
  forward_on_device(on_device(f), workspace, stream);
}

template <typename T, typename P>
void batch_norm_backward(const BatchNormBackwardChannel<T, P>& f, void* workspace, void* stream) {
  backward_on_device(on_device(f), workspace, stream);
}

#define MX_BATCH_NORM_GPU_INSTANTIATE(T, P)                                                   \
  template void batch_norm_forward<T, P>(const BatchNormForwardChannel<T, P>&, void*, void*); \
  template void batch_norm_backward<T, P>(const BatchNormBackwardChannel<T, P>&, void*, void*);
MX_BATCH_NORM_GPU_INSTANTIATE(float, float)
MX_BATCH_NORM_GPU_INSTANTIATE(double, double)
// Mixed precision: 16-bit data, float32 parameters and statistics.
MX_BATCH_NORM_GPU_INSTANTIATE(half_t, float)
MX_BATCH_NORM_GPU_INSTANTIATE(bf16_t, float)
#undef MX_BATCH_NORM_GPU_INSTANTIATE

}  // namespace mx::op::cuda
