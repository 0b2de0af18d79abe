// FullyConnected on the GPU: its three products (cuBLAS GEMMs) as row-major
// argument sets, and the per-element logic of its own kernels, the bias
// broadcast over the rows of the output and the bias gradient (the column
// sums of the output gradient). Shared by the GPU code and the CPU tests.
#pragma once

#include <cstdint>

#include "op/compute_type.h"
#include "op/cuda/gemm_args.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// With X (rows x k), W (hidden x k), Y and dY (rows x hidden), all dense:
// Y (req) X W^T.
inline cuda::RowMajorGemm fc_output_product(int64_t rows, int64_t k, int64_t hidden) {
  return {false, true, rows, hidden, k, k, k, hidden};
}
// dX (req) dY W.
inline cuda::RowMajorGemm fc_data_grad_product(int64_t rows, int64_t k, int64_t hidden) {
  return {false, false, rows, k, hidden, hidden, k, k};
}
// dW (req) dY^T X.
inline cuda::RowMajorGemm fc_weight_grad_product(int64_t rows, int64_t k, int64_t hidden) {
  return {true, false, hidden, k, rows, hidden, k, k};
}

// y[r, j] (req) bias[j] for output element i = r * hidden + j.
template <typename T>
struct BiasRows {
  T* y;
  const T* bias;
  int64_t hidden;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { store_value(y + i, req, bias[i % hidden]); }
};

// db[j] (req) sum over r of dy[r, j], one output per index j. Threads with
// consecutive j read consecutive addresses of each row. The GPU splits each
// column's rows among `parts` threads (rows part, part + parts, ...:
// partial) and adds their float64 parts in order (write_sum); operator() is
// the one-part case, in row order.
template <typename T>
struct ColumnSums {
  T* db;
  const T* dy;
  int64_t rows, hidden;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t j) const { write_sum(j, partial(j, 0, 1)); }
  MX_HOST_DEVICE double partial(int64_t j, int64_t part, int64_t parts) const {
    double sum = 0;
    for (int64_t r = part; r < rows; r += parts)
      sum += static_cast<double>(widen(dy[r * hidden + j]));
    return sum;
  }
  MX_HOST_DEVICE void write_sum(int64_t j, double sum) const {
    store_value(db + j, req, static_cast<T>(sum));
  }
};

}  // namespace mx::op::kernels
