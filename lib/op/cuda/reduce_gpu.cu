// GPU kernels of the reductions: one thread per output (ReduceSerialKernel)
// or one block per output with a tree in shared memory (ReduceBlockKernel),
// chosen by reduce_block_threads; the gradients and argmax are one functor
// per element (tensor/reduce_kernels.h).
#include <cuda_fp16.h>

#include <algorithm>

#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/reduce_gpu.h"

namespace mx::op::cuda {
namespace {

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
    __syncthreads();
    for (int stride = threads / 2; stride > 0; stride /= 2) {
      if (t < stride) f.combine(partials, t, stride);
      __syncthreads();
    }
    if (t == 0) f.write(o, partials[0]);
    __syncthreads();  // partials[0] is read before the next output overwrites it
  }
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
  const auto blocks = static_cast<unsigned>(std::min<int64_t>(index.out_size, kMaxBlocks));
  const size_t shared = sizeof(typename R::Acc) * static_cast<size_t>(threads);
  block_reduce_kernel<<<blocks, threads, shared, stream_of(stream)>>>(
      index.out_size, ReduceBlockKernel<T, R>{index, reducer, in, out, req});
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
