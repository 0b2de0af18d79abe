#include "op/cuda/block_sum.cuh"
#include "op/cuda/channel_bias_gpu.h"
#include "op/cuda/device_value.cuh"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::cuda {
namespace {

template <typename T>
struct ChannelBiasAdd {
  T* y;
  const T* bias;
  int64_t channels, plane;
  __device__ void operator()(int64_t i) const {
    const int64_t c = (i / plane) % channels;
    y[i] = T(widen(y[i]) + widen(bias[c]));
  }
};

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    channel_bias_grad_kernel(const T* dy, int64_t batch, int64_t channels, int64_t plane, T* db,
                             OpReq req) {
  __shared__ double shared[kBlockThreads];
  const int64_t c = blockIdx.x, count = batch * plane;
  double sum = 0;
  for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
    const int64_t n = e / plane, p = e % plane;
    sum += static_cast<double>(widen(dy[(n * channels + c) * plane + p]));
  }
  sum = block_sum(sum, shared);
  if (threadIdx.x == 0) kernels::store_value(db + c, req, T(static_cast<float>(sum)));
}

}  // namespace

void channel_bias_add_gpu(const char* op, DType dtype, const RunContext& rctx, const void* bias,
                          void* y, int64_t batch, int64_t channels, int64_t plane) {
  if (batch * channels * plane == 0) return;
  dispatch_device_real(dtype, op, [&](auto zero) {
    using T = decltype(zero);
    launch_elements(
        batch * channels * plane, stream_of(rctx.stream), op,
        ChannelBiasAdd<T>{static_cast<T*>(y), static_cast<const T*>(bias), channels, plane});
  });
}

void channel_bias_grad_gpu(const char* op, DType dtype, const RunContext& rctx, const void* dy,
                           int64_t batch, int64_t channels, int64_t plane, void* db, OpReq req) {
  if (req == OpReq::kNull || channels == 0) return;
  dispatch_device_real(dtype, op, [&](auto zero) {
    using T = decltype(zero);
    channel_bias_grad_kernel<T>
        <<<static_cast<unsigned>(channels), kBlockThreads, 0, stream_of(rctx.stream)>>>(
            static_cast<const T*>(dy), batch, channels, plane, static_cast<T*>(db), req);
    check_launch("channel_bias_grad_kernel", op);
  });
}

}  // namespace mx::op::cuda
