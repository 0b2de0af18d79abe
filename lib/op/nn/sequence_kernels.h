// Per-element functors of SequenceMask, SequenceLast and SequenceReverse,
// run by the GPU kernels (sequence_gpu.cu, one thread per element) and by
// tests/op/test_sequence_kernels_host.cc on the CPU against the CPU
// operators. T is the element type as stored (half_t on the CPU, __half on
// the GPU; op/tensor/tensor_kernels.h's store_value adds float16 in float).
//
// The data is seen as (d0, d1, rest): the sequence axis is d0 (axis 0) or
// d1 (axis 1), the batch axis the other one. Lengths, of any dtype, are
// truncated toward zero and clamped to [0, steps], so a length outside the
// sequence never reads or writes outside the array (MXNet 1.9.1 reads past
// it for SequenceLast and SequenceReverse).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/dtype.h"
#include "op/tensor/tensor_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op {

// An IEEE binary16 value from its bits (host and device).
MX_HOST_DEVICE inline float half_bits_to_float(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  float v;
  if (exponent == 0)
    v = ::ldexpf(static_cast<float>(mantissa), -24);  // zero or subnormal
  else if (exponent == 31)
    v = mantissa != 0 ? NAN : INFINITY;
  else
    v = ::ldexpf(static_cast<float>(1024 + mantissa), exponent - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

// A bfloat16 value from its bits: the upper half of a float32 (host and device).
MX_HOST_DEVICE inline float bf16_bits_to_float(uint16_t b) {
  const uint32_t f = static_cast<uint32_t>(b) << 16;
  float v;
  memcpy(&v, &f, sizeof v);
  return v;
}

// The optional sequence_length input, one value per batch entry.
struct SequenceLengths {
  const void* data = nullptr;  // null: every sequence is full length
  DType dtype = DType::kFloat32;

  MX_HOST_DEVICE double value(int64_t b) const {
    switch (dtype) {
      case DType::kFloat32: return static_cast<const float*>(data)[b];
      case DType::kFloat64: return static_cast<const double*>(data)[b];
      case DType::kFloat16: return half_bits_to_float(static_cast<const uint16_t*>(data)[b]);
      case DType::kUint8: return static_cast<const uint8_t*>(data)[b];
      case DType::kInt8: return static_cast<const int8_t*>(data)[b];
      case DType::kInt32: return static_cast<const int32_t*>(data)[b];
      case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(data)[b]);
      case DType::kBFloat16: return bf16_bits_to_float(static_cast<const uint16_t*>(data)[b]);
    }
    return 0;
  }
  // Sequence b's length in [0, steps].
  MX_HOST_DEVICE int64_t of(int64_t b, int64_t steps) const {
    if (data == nullptr) return steps;
    const double v = value(b);
    if (!(v >= 1.0)) return 0;  // also NaN
    return v >= static_cast<double>(steps) ? steps : static_cast<int64_t>(v);
  }
};

struct SequenceView {
  int64_t d0 = 1, d1 = 1, rest = 1;
  int axis = 0;  // the sequence axis, 0 or 1
  MX_HOST_DEVICE int64_t steps() const { return axis == 0 ? d0 : d1; }
  MX_HOST_DEVICE int64_t batch() const { return axis == 0 ? d1 : d0; }
  MX_HOST_DEVICE int64_t size() const { return d0 * d1 * rest; }
  // The element at step t of batch entry b, feature r.
  MX_HOST_DEVICE int64_t index(int64_t t, int64_t b, int64_t r) const {
    return axis == 0 ? (t * d1 + b) * rest + r : (b * d1 + t) * rest + r;
  }
  // Element i's step and batch entry.
  MX_HOST_DEVICE void locate(int64_t i, int64_t& t, int64_t& b) const {
    const int64_t row = i / rest;
    const int64_t i0 = row / d1, i1 = row % d1;
    t = axis == 0 ? i0 : i1;
    b = axis == 0 ? i1 : i0;
  }
};

// SequenceMask: y = x for steps before the length, `value` after. Its
// gradient is the same map of dy with value 0.
template <typename T>
struct SequenceMaskElements {
  SequenceView view;
  const T* x;
  T* y;
  SequenceLengths lengths;
  T value;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    int64_t t, b;
    view.locate(i, t, b);
    kernels::store_value(y + i, req, t < lengths.of(b, view.steps()) ? x[i] : value);
  }
};

// SequenceLast: output element o = b * rest + r is step length - 1 of batch
// entry b; 0 for an empty sequence.
template <typename T>
struct SequenceLastElements {
  SequenceView view;
  const T* x;
  T* y;
  SequenceLengths lengths;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    const int64_t b = o / view.rest, r = o % view.rest;
    const int64_t n = lengths.of(b, view.steps());
    kernels::store_value(y + o, req,
                         n > 0 ? x[view.index(n - 1, b, r)] : kernels::convert_value<T>(0.0f));
  }
};

// SequenceLast's gradient, one thread per data element: dy where the
// element was the last step, 0 elsewhere.
template <typename T>
struct SequenceLastGradElements {
  SequenceView view;
  const T* dy;
  T* dx;
  SequenceLengths lengths;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    int64_t t, b;
    view.locate(i, t, b);
    const bool last = t + 1 == lengths.of(b, view.steps());
    kernels::store_value(
        dx + i, req, last ? dy[b * view.rest + i % view.rest] : kernels::convert_value<T>(0.0f));
  }
};

// SequenceReverse (axis 0): step t of batch entry b takes step length-1-t
// within the length; steps past it keep their place. The map is its own
// inverse, so the gradient is the same map of dy.
template <typename T>
struct SequenceReverseElements {
  SequenceView view;
  const T* x;
  T* y;
  SequenceLengths lengths;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    int64_t t, b;
    view.locate(i, t, b);
    const int64_t n = lengths.of(b, view.steps());
    const int64_t from = t < n ? n - 1 - t : t;
    kernels::store_value(y + i, req, x[view.index(from, b, i % view.rest)]);
  }
};

}  // namespace mx::op
