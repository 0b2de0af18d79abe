// Per-element logic of take, gather_nd and where, shared by the CPU kernels
// (tensor/indexing.cc) and the GPU ones (op/cuda/indexing_gpu.cu). Index
// values may have any dtype; they are truncated toward zero as MXNet's
// static_cast does. The gradients' scatters add atomically on the GPU,
// where several indices may name one element.
#pragma once

#include <cstdint>

#include "base/shape.h"
#include "op/nn/embedding_kernels.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// ---- take ----------------------------------------------------------------

enum class TakeMode { kClip, kWrap, kRaise };

// The position on an axis of `size` > 0 that index value v takes: truncated
// toward zero, then wrapped (Python's modulo) or clipped into [0, size).
// Raise mode has checked the values first and clips (as MXNet does). NaN is 0.
template <typename I>
MX_HOST_DEVICE int64_t take_position(I v, int64_t size, TakeMode mode) {
  const double d = convert_value<double>(v);
  if (!(d == d)) return 0;
  if (mode != TakeMode::kWrap) {
    if (d < 1) return 0;
    if (d >= static_cast<double>(size - 1)) return size - 1;
    return static_cast<int64_t>(d);
  }
  const double bounded = d < -9.0e18 ? -9.0e18 : (d > 9.0e18 ? 9.0e18 : d);
  const int64_t k = static_cast<int64_t>(bounded) % size;
  return k < 0 ? k + size : k;
}

// Whether raise mode accepts index value v on an axis of `size`: MXNet
// compares the value itself with [0, size - 1] (so 2.5 fails on size 3).
template <typename I>
MX_HOST_DEVICE bool take_in_range(I v, int64_t size) {
  const double d = convert_value<double>(v);
  return d >= 0 && d <= static_cast<double>(size - 1);
}

// take's output is (outer, count, inner): the input seen as (outer, size,
// inner) with the axis's position k chosen by indices[k].
struct TakeLayout {
  int64_t outer = 1, size = 1, inner = 1, count = 1;
};

// out[i] (req) data[o, position(indices[k]), j] for i = (o * count + k) * inner + j.
template <typename T, typename I>
struct TakeGather {
  T* out;
  const T* data;
  const I* indices;
  TakeLayout l;
  TakeMode mode;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t j = i % l.inner, rest = i / l.inner;
    const int64_t k = rest % l.count, o = rest / l.count;
    const int64_t row = take_position(indices[k], l.size, mode);
    store_value(out + i, req, data[(o * l.size + row) * l.inner + j]);
  }
};

// grad[o, position(indices[k]), j] += g[i] (the gradient of TakeGather).
template <typename T, typename I>
struct TakeScatterAdd {
  T* grad;
  const T* g;
  const I* indices;
  TakeLayout l;
  TakeMode mode;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t j = i % l.inner, rest = i / l.inner;
    const int64_t k = rest % l.count, o = rest / l.count;
    const int64_t row = take_position(indices[k], l.size, mode);
    add_atomic(grad + (o * l.size + row) * l.inner + j, g[i]);
  }
};

// *bad = 1 when indices[k] is outside [0, size - 1] (raise mode's check).
template <typename I>
struct TakeCheck {
  const I* indices;
  int64_t size;
  int* bad;
  MX_HOST_DEVICE void operator()(int64_t k) const {
    if (!take_in_range(indices[k], size)) *bad = 1;
  }
};

// ---- gather_nd ----------------------------------------------------------------

// indices (m, count...) pick, for each of `count` positions, one element of
// the data's first m axes (negative values count from the end); each picks a
// block of `inner` elements (the data's remaining axes).
struct GatherNdLayout {
  int m = 0;
  int64_t count = 0, inner = 1;
  int64_t sizes[Shape::kMaxNdim] = {};
  int64_t strides[Shape::kMaxNdim] = {};  // in elements of the data

  // The data offset of position z's block: MXNet's (int64(v + size)) % size.
  template <typename I>
  MX_HOST_DEVICE int64_t offset(const I* indices, int64_t z) const {
    int64_t off = 0;
    for (int a = 0; a < m; ++a) {
      const double v = convert_value<double>(indices[a * count + z]);
      const int64_t k = static_cast<int64_t>(v + static_cast<double>(sizes[a])) % sizes[a];
      off += k * strides[a];
    }
    return off;
  }
  // Whether index value v is a valid position on axis a: in [-size, size - 1].
  template <typename I>
  MX_HOST_DEVICE bool in_range(I v, int a) const {
    const double d = convert_value<double>(v);
    return d >= -static_cast<double>(sizes[a]) && d <= static_cast<double>(sizes[a] - 1);
  }
};

// out[i] (req) data[offset(z) + j] for i = z * inner + j.
template <typename T, typename I>
struct GatherNd {
  T* out;
  const T* data;
  const I* indices;
  GatherNdLayout l;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t z = i / l.inner, j = i - z * l.inner;
    store_value(out + i, req, data[l.offset(indices, z) + j]);
  }
};

// grad[offset(z) + j] += g[i] (the gradient of GatherNd).
template <typename T, typename I>
struct GatherNdScatterAdd {
  T* grad;
  const T* g;
  const I* indices;
  GatherNdLayout l;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t z = i / l.inner, j = i - z * l.inner;
    add_atomic(grad + l.offset(indices, z) + j, g[i]);
  }
};

// *bad = 1 when index element e (of the m * count) is out of range.
template <typename I>
struct GatherNdCheck {
  const I* indices;
  GatherNdLayout l;
  int* bad;
  MX_HOST_DEVICE void operator()(int64_t e) const {
    if (!l.in_range(indices[e], static_cast<int>(e / l.count))) *bad = 1;
  }
};

// ---- where ----------------------------------------------------------------

// Whether a condition value is true: anything but 0 (NaN included).
template <typename C>
MX_HOST_DEVICE bool is_true(C c) {
  return convert_value<double>(c) != 0.0;
}

// out[i] (req) cond[i / inner] ? x[i] : y[i]; inner is 1 when the condition
// has the data's shape, the size of a row when it is 1-D over the first axis.
template <typename T, typename C>
struct WhereSelect {
  T* out;
  const C* cond;
  const T* x;
  const T* y;
  int64_t inner;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    store_value(out + i, req, is_true(cond[i / inner]) ? x[i] : y[i]);
  }
};

// grad[i] (req) g[i] where the condition picks this side (x: true, y: false), 0 elsewhere.
template <typename T, typename C>
struct WhereGrad {
  T* grad;
  const T* g;
  const C* cond;
  int64_t inner;
  bool x_side;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    store_value(grad + i, req, is_true(cond[i / inner]) == x_side ? g[i] : T(0.0f));
  }
};

}  // namespace mx::op::kernels
