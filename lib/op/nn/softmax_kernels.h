// The per-vector softmax functors: one call per vector (row) of the
// (outer, size, inner) view, with the CPU kernel's arithmetic (maximum
// subtracted, sums in float64, the same order). The GPU kernels run one
// thread per row (softmax_gpu.cu); tests/op/test_nn_kernels_host.cc runs the
// functors on the CPU against the CPU operators.
#pragma once

#include <cstdint>
#include <limits>

#include "base/dtype.h"
#include "op/nn/nn_math.h"
#include "op/tensor_ref.h"

namespace mx::op {

// An array seen as (outer, size, inner) around the softmax axis.
struct SoftmaxLayout {
  int64_t outer = 1, size = 1, inner = 1;
};

// softmax's optional `length` input (one integer per vector), read as
// int64 whatever its integer type; data null: no lengths.
struct LengthRef {
  const void* data = nullptr;
  DType dtype = DType::kInt64;
  MX_HOST_DEVICE int64_t operator[](int64_t i) const {
    switch (dtype) {
      case DType::kUint8: return static_cast<const uint8_t*>(data)[i];
      case DType::kInt8: return static_cast<const int8_t*>(data)[i];
      case DType::kInt32: return static_cast<const int32_t*>(data)[i];
      case DType::kInt64: return static_cast<const int64_t*>(data)[i];
      default: return 0;
    }
  }
  // The used length of vector `row`, in [0, size].
  MX_HOST_DEVICE int64_t of(int64_t row, int64_t size) const {
    if (data == nullptr) return size;
    const int64_t n = (*this)[row];
    return n < 0 ? 0 : (n > size ? size : n);
  }
};

// Vector `row` (row = o * inner + j) of y = softmax(x / t) (or its log);
// past its length the output is 0.
template <typename TI, typename TO>
struct SoftmaxRowForward {
  const TI* x;
  TO* y;
  SoftmaxLayout l;
  double inv_t;
  bool log;
  OpReq req;
  LengthRef lengths;

  MX_HOST_DEVICE int64_t rows() const { return l.outer * l.inner; }
  MX_HOST_DEVICE void operator()(int64_t row) const {
    if (req == OpReq::kNull) return;
    const int64_t o = row / l.inner, j = row % l.inner;
    const TI* xr = x + o * l.size * l.inner + j;
    TO* yr = y + o * l.size * l.inner + j;
    const int64_t n = lengths.of(row, l.size);
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t k = 0; k < n; ++k) {
      const double v = static_cast<double>(xr[k * l.inner]);
      top = top < v ? v : top;  // std::max's choice
    }
    double sum = 0;
    for (int64_t k = 0; k < n; ++k)
      sum += nnmath::exp((static_cast<double>(xr[k * l.inner]) - top) * inv_t);
    for (int64_t k = 0; k < l.size; ++k) {
      double v = 0.0;
      if (k < n) {
        const double z = (static_cast<double>(xr[k * l.inner]) - top) * inv_t;
        v = log ? z - nnmath::log(sum) : nnmath::exp(z) / sum;
      }
      assign(yr + k * l.inner, req, static_cast<TO>(v));
    }
  }
};

// The gradient of SoftmaxRowForward from the output y and its gradient g:
// dx = y * (g - sum(g * y)) / t, or for log: dx = (g - exp(y) * sum(g)) / t.
template <typename TI, typename TO>
struct SoftmaxRowBackward {
  const TO* y;
  const TO* g;
  TI* dx;
  SoftmaxLayout l;
  double inv_t;
  bool log;
  OpReq req;
  LengthRef lengths;

  MX_HOST_DEVICE int64_t rows() const { return l.outer * l.inner; }
  MX_HOST_DEVICE void operator()(int64_t row) const {
    if (req == OpReq::kNull) return;
    const int64_t o = row / l.inner, j = row % l.inner;
    const int64_t base = o * l.size * l.inner + j;
    const int64_t n = lengths.of(row, l.size);
    double s = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = base + k * l.inner;
      s += log ? static_cast<double>(g[i]) : static_cast<double>(g[i]) * static_cast<double>(y[i]);
    }
    for (int64_t k = 0; k < l.size; ++k) {
      const int64_t i = base + k * l.inner;
      double v = 0.0;
      if (k < n) {
        const double yi = static_cast<double>(y[i]);
        const double gi = static_cast<double>(g[i]);
        v = (log ? gi - nnmath::exp(yi) * s : yi * (gi - s)) * inv_t;
      }
      assign(dx + i, req, static_cast<TI>(v));
    }
  }
};

}  // namespace mx::op
