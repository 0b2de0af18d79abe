// The per-vector softmax functors: one call per vector (row) of the
// (outer, size, inner) view, with the CPU kernel's arithmetic (maximum
// subtracted, sums in float64). Each pass over a row is also written for
// thread t of `threads` (elements t, t + threads, ...), so that the GPU can
// give a long contiguous row a block and combine the threads' parts
// (softmax_gpu.cu); one thread (t = 0, threads = 1) is the CPU's order.
// tests/op/test_nn_kernels_host.cc runs both on the CPU against the CPU
// operators.
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

// The larger of two partial maxima, as std::max chooses (a NaN never wins).
MX_HOST_DEVICE inline double softmax_max(double top, double v) { return top < v ? v : top; }

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
  MX_HOST_DEVICE int64_t base(int64_t row) const {
    return (row / l.inner) * l.size * l.inner + row % l.inner;
  }
  MX_HOST_DEVICE double partial_max(int64_t row, int64_t t, int64_t threads) const {
    const TI* xr = x + base(row);
    const int64_t n = lengths.of(row, l.size);
    double top = -std::numeric_limits<double>::infinity();
    for (int64_t k = t; k < n; k += threads)
      top = softmax_max(top, static_cast<double>(xr[k * l.inner]));
    return top;
  }
  MX_HOST_DEVICE double partial_sum(int64_t row, double top, int64_t t, int64_t threads) const {
    const TI* xr = x + base(row);
    const int64_t n = lengths.of(row, l.size);
    double sum = 0;
    for (int64_t k = t; k < n; k += threads)
      sum += nnmath::exp((static_cast<double>(xr[k * l.inner]) - top) * inv_t);
    return sum;
  }
  MX_HOST_DEVICE void write(int64_t row, double top, double sum, int64_t t, int64_t threads) const {
    const TI* xr = x + base(row);
    TO* yr = y + base(row);
    const int64_t n = lengths.of(row, l.size);
    for (int64_t k = t; k < l.size; k += threads) {
      double v = 0.0;
      if (k < n) {
        const double z = (static_cast<double>(xr[k * l.inner]) - top) * inv_t;
        v = log ? z - nnmath::log(sum) : nnmath::exp(z) / sum;
      }
      assign(yr + k * l.inner, req, static_cast<TO>(v));
    }
  }
  MX_HOST_DEVICE void operator()(int64_t row) const {
    if (req == OpReq::kNull) return;
    const double top = partial_max(row, 0, 1);
    write(row, top, partial_sum(row, top, 0, 1), 0, 1);
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
  MX_HOST_DEVICE int64_t base(int64_t row) const {
    return (row / l.inner) * l.size * l.inner + row % l.inner;
  }
  // Thread t's part of sum(g * y) (of sum(g) for log).
  MX_HOST_DEVICE double partial_dot(int64_t row, int64_t t, int64_t threads) const {
    const int64_t b = base(row), n = lengths.of(row, l.size);
    double s = 0;
    for (int64_t k = t; k < n; k += threads) {
      const int64_t i = b + k * l.inner;
      s += log ? static_cast<double>(g[i]) : static_cast<double>(g[i]) * static_cast<double>(y[i]);
    }
    return s;
  }
  MX_HOST_DEVICE void write(int64_t row, double s, int64_t t, int64_t threads) const {
    const int64_t b = base(row), n = lengths.of(row, l.size);
    for (int64_t k = t; k < l.size; k += threads) {
      const int64_t i = b + k * l.inner;
      double v = 0.0;
      if (k < n) {
        const double yi = static_cast<double>(y[i]);
        const double gi = static_cast<double>(g[i]);
        v = (log ? gi - nnmath::exp(yi) * s : yi * (gi - s)) * inv_t;
      }
      assign(dx + i, req, static_cast<TI>(v));
    }
  }
  MX_HOST_DEVICE void operator()(int64_t row) const {
    if (req == OpReq::kNull) return;
    write(row, partial_dot(row, 0, 1), 0, 1);
  }
};

}  // namespace mx::op
