// Per-element logic of FullyConnected's own GPU kernels (the products are
// cuBLAS GEMMs): the bias broadcast over the rows of the output and the bias
// gradient, the column sums of the output gradient. Shared by the .cu and
// the CPU tests (for_each_element_host).
#pragma once

#include <cstdint>

#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

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
// consecutive j read consecutive addresses of each row; the sum runs in row
// order, as the CPU's.
template <typename T>
struct ColumnSums {
  T* db;
  const T* dy;
  int64_t rows, hidden;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t j) const {
    T sum = T(0);
    for (int64_t r = 0; r < rows; ++r) sum += dy[r * hidden + j];
    store_value(db + j, req, sum);
  }
};

}  // namespace mx::op::kernels
