// FullyConnected's own GPU kernels (the products go through cublas_gemm.h);
// functors in op/nn/fully_connected_kernels.h. Asynchronous on the stream
// of `rctx`; float32, float64, float16 and bfloat16.
#pragma once

#include <cstdint>

#include "engine/engine.h"
#include "op/tensor_ref.h"

namespace mx::op::cuda {

// y[r, j] (req) bias[j] for the rows x hidden output y.
void bias_rows_gpu(const RunContext& rctx, const TensorRef& bias, const TensorRef& y, int64_t rows,
                   int64_t hidden, OpReq req);

// dbias[j] (req) sum over r of dy[r, j].
void column_sums_gpu(const RunContext& rctx, const TensorRef& dy, const TensorRef& dbias,
                     int64_t rows, int64_t hidden, OpReq req);

}  // namespace mx::op::cuda
