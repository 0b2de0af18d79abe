// Strided views for the operators that move elements without changing them
// (slice, tile, repeat, broadcast_to/like/axis): output element i, counted
// row-major over the view's axes, is input element sum_d coord_d * stride_d.
// A stride may be 0 (a broadcast or repeated axis) or negative (a slice with
// a negative step; the input pointer then points at the slice's first
// element). StridedIndex is a small POD the GPU kernels get by value; the
// CPU kernels (shape_util.h) walk the same view run by run.
#pragma once

#include <cstdint>
#include <vector>

#include "base/error.h"
#include "base/shape.h"
#include "base/strings.h"
#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// tile splits every axis in two (repetition, original axis).
inline constexpr int kMaxStridedDims = 2 * Shape::kMaxNdim;

struct StridedIndex {
  int ndim = 0;
  int64_t dims[kMaxStridedDims] = {};
  int64_t strides[kMaxStridedDims] = {};

  // The input offset of output element i.
  MX_HOST_DEVICE int64_t operator()(int64_t i) const {
    int64_t offset = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / dims[d];
      offset += (i - q * dims[d]) * strides[d];
      i = q;
    }
    return offset;
  }
};

// The view with axes of size `dims` and input strides `strides`: size-1 axes
// are dropped and neighbours that step as one axis are merged (outer stride
// = inner stride * inner size), so contiguous runs become one long axis.
inline StridedIndex strided_index(const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& strides) {
  MX_CHECK(dims.size() == strides.size(), "strided view: ", dims.size(), " axes but ",
           strides.size(), " strides");
  StridedIndex index;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    const int n = index.ndim;
    if (n > 0 && index.strides[n - 1] == strides[d] * dims[d]) {
      index.dims[n - 1] *= dims[d];
      index.strides[n - 1] = strides[d];
      continue;
    }
    MX_CHECK(n < kMaxStridedDims, "strided view with more than ", kMaxStridedDims, " axes");
    index.dims[n] = dims[d];
    index.strides[n] = strides[d];
    ++index.ndim;
  }
  return index;
}

// Row-major strides of `shape`.
inline std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.ndim()));
  int64_t s = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    strides[static_cast<size_t>(d)] = s;
    s *= shape[d];
  }
  return strides;
}

// out[i] (req) in[index(i)]: the forward pass of a strided view.
template <typename T>
struct StridedGather {
  T* out;
  const T* in;
  StridedIndex index;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { store_value(out + i, req, in[index(i)]); }
};

// out[index(i)] (req) in[i]: the backward pass of a view whose elements are
// distinct (a slice), which writes every element at most once.
template <typename T>
struct StridedScatter {
  T* out;
  const T* in;
  StridedIndex index;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { store_value(out + index(i), req, in[i]); }
};

}  // namespace mx::op::kernels
