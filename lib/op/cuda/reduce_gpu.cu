// GPU kernels of the reductions: one thread per output (ReduceSerialKernel)
// or one block per output with a tree in shared memory (ReduceBlockKernel),
// chosen by reduce_block_threads, and for a few long outputs several blocks
// per output whose parts a second kernel merges in order
// (reduce_split_parts; the parts live in stream-ordered memory). The
// gradients and argmax are one functor per element (tensor/reduce_kernels.h).
#include <cuda_fp16.h>

#include <algorithm>

#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/reduce_gpu.h"

namespace mx::op::cuda {
namespace {

// The block tree of the block reductions over partials[0, blockDim.x).
template <typename F>
__device__ void combine_block(const F& f, typename F::Acc* partials) {
  const int t = static_cast<int>(threadIdx.x);
  __syncthreads();
  for (int stride = static_cast<int>(blockDim.x) / 2; stride > 0; stride /= 2) {
    if (t < stride) f.combine(partials, t, stride);
    __syncthreads();
  }
}

// One block per output o (grid-stride over the outputs); blockDim.x is a
// power of two and the dynamic shared memory holds blockDim.x accumulators.
template <typename F>
__global__ void block_reduce_kernel(int64_t outputs, F f) {
  using Acc = typename F::Acc;
  extern __shared__ __align__(16) unsigned char shared[];
  Acc* partials = reinterpret_cast<Acc*>(shared);
  const int t = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  for (int64_t o = blockIdx.x; o < outputs; o += gridDim.x) {
    partials[t] = f.partial(o, t, threads);
    combine_block(f, partials);
    if (t == 0) f.write(o, partials[0]);
    __syncthreads();  // partials[0] is read before the next output overwrites it
  }
}

// Block (part, o): part `part` of `parts` of output o into parts_out[o * parts + part].
template <typename F>
__global__ void split_reduce_kernel(F f, int64_t parts, typename F::Acc* parts_out) {
  using Acc = typename F::Acc;
  extern __shared__ __align__(16) unsigned char shared[];
  Acc* partials = reinterpret_cast<Acc*>(shared);
  const int64_t part = blockIdx.x, o = blockIdx.y, threads = blockDim.x;
  partials[threadIdx.x] = f.partial_from(o, part * threads + threadIdx.x, parts * threads);
  combine_block(f, partials);
  if (threadIdx.x == 0) parts_out[o * parts + part] = partials[0];
}

// One thread per output: its parts merged in order, then written.
template <typename F>
__global__ void merge_parts_kernel(F f, int64_t parts, const typename F::Acc* parts_in) {
  const int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (o >= f.index.out_size) return;
  typename F::Acc acc = parts_in[o * parts];
  for (int64_t p = 1; p < parts; ++p) f.reducer.merge(acc, parts_in[o * parts + p]);
  f.write(o, acc);
}

template <typename T, typename R>
void split_reduce(const char* op, const ReduceBlockKernel<T, R>& f, int threads, int64_t parts,
                  cudaStream_t stream) {
  using Acc = typename R::Acc;
  void* buffer = nullptr;
  const size_t bytes = sizeof(Acc) * static_cast<size_t>(f.index.out_size * parts);
  MX_CUDA_CHECK(cudaMallocAsync(&buffer, bytes, stream), op);
  auto* acc = static_cast<Acc*>(buffer);
  const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(f.index.out_size));
  split_reduce_kernel<<<grid, threads, sizeof(Acc) * static_cast<size_t>(threads), stream>>>(
      f, parts, acc);
  check_launch("split_reduce_kernel", op);
  merge_parts_kernel<<<1, 128, 0, stream>>>(f, parts, acc);
  check_launch("merge_parts_kernel", op);
  // Freed in stream order: the memory is reused only after both kernels.
  MX_CUDA_CHECK(cudaFreeAsync(buffer, stream), op);
}

template <typename T, typename R>
void reduce_with(const char* op, const R& reducer, const ReduceIndex& index, const T* in, T* out,
                 OpReq req, void* stream) {
  if (req == OpReq::kNull || index.out_size == 0) return;
  const int threads = reduce_block_threads(index);
  if (threads == 0) {
    launch_elements(index.out_size, stream_of(stream), op,
                    ReduceSerialKernel<T, R>{index, reducer, in, out, req});
    return;
  }
  const ReduceBlockKernel<T, R> f{index, reducer, in, out, req};
  if (const int64_t parts = reduce_split_parts(index, threads); parts > 1) {
    split_reduce(op, f, threads, parts, stream_of(stream));
    return;
  }
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(index.out_size, kMaxBlocks));
  const size_t shared = sizeof(typename R::Acc) * static_cast<size_t>(threads);
  block_reduce_kernel<<<blocks, threads, shared, stream_of(stream)>>>(index.out_size, f);
  check_launch("block_reduce_kernel", op);
}

}  // namespace

template <typename T>
void reduce_gpu(const char* op, ReduceOp kind, double scale, const ReduceIndex& index, const T* in,
                T* out, OpReq req, void* stream) {
  switch (kind) {
    case ReduceOp::kSum: {
      SumReducer<T> sum;
      sum.scale = scale;
      reduce_with(op, sum, index, in, out, req, stream);
      return;
    }
    case ReduceOp::kMax:
      reduce_with(op, ExtremumReducer<T, true>{}, index, in, out, req, stream);
      return;
    case ReduceOp::kMin:
      reduce_with(op, ExtremumReducer<T, false>{}, index, in, out, req, stream);
      return;
    case ReduceOp::kNorm1:
      reduce_with(op, NormReducer<T, 1>{}, index, in, out, req, stream);
      return;
    case ReduceOp::kNorm2:
      reduce_with(op, NormReducer<T, 2>{}, index, in, out, req, stream);
      return;
  }
}

template <typename T>
void spread_grad_gpu(const char* op, const BroadcastIndex<1>& index, T scale, const T* g, T* dx,
                     int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op, SpreadGradKernel<T>{index, scale, g, dx, req});
}

template <typename T>
void extremum_grad_gpu(const char* op, const BroadcastIndex<1>& index, const T* g, const T* x,
                       const T* y, T* dx, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op, ExtremumGradKernel<T>{index, g, x, y, dx, req});
}

template <typename T>
void norm_grad_gpu(const char* op, const BroadcastIndex<1>& index, int ord, const T* g, const T* x,
                   const T* y, T* dx, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op, NormGradKernel<T>{index, ord, g, x, y, dx, req});
}

template <typename T>
void argmax_gpu(const char* op, const T* in, T* out, int64_t outer, int64_t size, int64_t inner,
                OpReq req, void* stream) {
  if (req == OpReq::kNull || size == 0) return;
  using D = DeviceType<T>;  // float16 is compared as __half on the device
  launch_elements(
      outer * inner, stream_of(stream), op,
      ArgmaxKernel<D>{reinterpret_cast<const D*>(in), reinterpret_cast<D*>(out), req, size, inner});
}

#define MX_REDUCE_GPU_INSTANTIATE(T)                                                             \
  template void reduce_gpu<T>(const char*, ReduceOp, double, const ReduceIndex&, const T*, T*,   \
                              OpReq, void*);                                                     \
  template void spread_grad_gpu<T>(const char*, const BroadcastIndex<1>&, T, const T*, T*,       \
                                   int64_t, OpReq, void*);                                       \
  template void extremum_grad_gpu<T>(const char*, const BroadcastIndex<1>&, const T*, const T*,  \
                                     const T*, T*, int64_t, OpReq, void*);                       \
  template void norm_grad_gpu<T>(const char*, const BroadcastIndex<1>&, int, const T*, const T*, \
                                 const T*, T*, int64_t, OpReq, void*);

MX_REDUCE_GPU_INSTANTIATE(float)
MX_REDUCE_GPU_INSTANTIATE(double)

template void argmax_gpu<float>(const char*, const float*, float*, int64_t, int64_t, int64_t, OpReq,
                                void*);
template void argmax_gpu<double>(const char*, const double*, double*, int64_t, int64_t, int64_t,
                                 OpReq, void*);
template void argmax_gpu<half_t>(const char*, const half_t*, half_t*, int64_t, int64_t, int64_t,
                                 OpReq, void*);
template void argmax_gpu<bf16_t>(const char*, const bf16_t*, bf16_t*, int64_t, int64_t, int64_t,
                                 OpReq, void*);
template void argmax_gpu<uint8_t>(const char*, const uint8_t*, uint8_t*, int64_t, int64_t, int64_t,
                                  OpReq, void*);
template void argmax_gpu<int32_t>(const char*, const int32_t*, int32_t*, int64_t, int64_t, int64_t,
                                  OpReq, void*);
template void argmax_gpu<int8_t>(const char*, const int8_t*, int8_t*, int64_t, int64_t, int64_t,
                                 OpReq, void*);
template void argmax_gpu<int64_t>(const char*, const int64_t*, int64_t*, int64_t, int64_t, int64_t,
                                  OpReq, void*);

}  // namespace mx::op::cuda
