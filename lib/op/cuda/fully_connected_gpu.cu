#include "op/cuda/fully_connected_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/infer_util.h"
#include "op/nn/fully_connected_kernels.h"

namespace mx::op::cuda {

void bias_rows_gpu(const RunContext& rctx, const TensorRef& bias, const TensorRef& y, int64_t rows,
                   int64_t hidden, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_real(y.dtype, "FullyConnected", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elements(rows * hidden, stream_of(rctx.stream), "FullyConnected",
                    kernels::BiasRows<T>{y.ptr<T>(), bias.ptr<T>(), hidden, req});
  });
}

void column_sums_gpu(const RunContext& rctx, const TensorRef& dy, const TensorRef& dbias,
                     int64_t rows, int64_t hidden, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_real(dy.dtype, "FullyConnected", [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_elements(hidden, stream_of(rctx.stream), "FullyConnected",
                    kernels::ColumnSums<T>{dbias.ptr<T>(), dy.ptr<T>(), rows, hidden, req});
  });
}

}  // namespace mx::op::cuda
