#include "op/cuda/device_value.cuh"
#include "op/cuda/fully_connected_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/infer_util.h"
#include "op/nn/fully_connected_kernels.h"

namespace mx::op::cuda {
namespace {

// The bias gradient: a block takes 32 neighbouring columns (a warp reads 32
// neighbouring addresses of a row) and splits their rows among 8 threads
// each, whose parts are added in order (no atomics: the same sums every run).
constexpr int kSumColumns = 32, kRowParts = 8, kSumThreads = kSumColumns * kRowParts;

template <typename T>
__global__ void __launch_bounds__(kSumThreads) column_sums_kernel(kernels::ColumnSums<T> f) {
  __shared__ double parts[kRowParts][kSumColumns];
  const int64_t j = blockIdx.x * static_cast<int64_t>(kSumColumns) + threadIdx.x;
  parts[threadIdx.y][threadIdx.x] = j < f.hidden ? f.partial(j, threadIdx.y, kRowParts) : 0.0;
  __syncthreads();
  if (threadIdx.y == 0 && j < f.hidden) {
    double sum = 0;
    for (int p = 0; p < kRowParts; ++p) sum += parts[p][threadIdx.x];
    f.write_sum(j, sum);
  }
}

}  // namespace

void bias_rows_gpu(const RunContext& rctx, const TensorRef& bias, const TensorRef& y, int64_t rows,
                   int64_t hidden, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_device_real(y.dtype, "FullyConnected", [&](auto zero) {
    using T = decltype(zero);
    launch_elements(rows * hidden, stream_of(rctx.stream), "FullyConnected",
                    kernels::BiasRows<T>{static_cast<T*>(y.data), static_cast<const T*>(bias.data),
                                         hidden, req});
  });
}

void column_sums_gpu(const RunContext& rctx, const TensorRef& dy, const TensorRef& dbias,
                     int64_t rows, int64_t hidden, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_device_real(dy.dtype, "FullyConnected", [&](auto zero) {
    using T = decltype(zero);
    if (hidden <= 0) return;
    const kernels::ColumnSums<T> f{static_cast<T*>(dbias.data), static_cast<const T*>(dy.data),
                                   rows, hidden, req};
    const auto blocks = static_cast<unsigned>((hidden + kSumColumns - 1) / kSumColumns);
    column_sums_kernel<T><<<blocks, dim3(kSumColumns, kRowParts), 0, stream_of(rctx.stream)>>>(f);
    check_launch("column_sums_kernel", "FullyConnected");
  });
}

}  // namespace mx::op::cuda
