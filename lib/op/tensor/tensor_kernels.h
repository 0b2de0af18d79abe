// Per-element logic of the GPU kernels of the tensor-shaping operators
// (transpose, slice_axis, Concat, SliceChannel, the reshaping copies),
// one_hot and Cast. Each functor's operator()(i) handles one element index;
// the .cu launches it over the index space with cuda::launch_elements, the
// CPU tests with for_each_element_host. T is the element type as stored:
// half_t on the CPU, __half on the GPU (op/cuda/device_value.cuh specializes
// HalfOps for it), so the arithmetic of float16 goes through float on both.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/bfloat16.h"
#include "base/error.h"
#include "base/half.h"
#include "base/host_device.h"
#include "op/tensor_ref.h"

namespace mx::op::kernels {

// float16 and bfloat16 conversions; every other type is not a half.
template <typename T>
struct HalfOps {
  static constexpr bool kIsHalf = false;
};
template <>
struct HalfOps<half_t> {
  static constexpr bool kIsHalf = true;
  static float to_float(half_t v) { return static_cast<float>(v); }
  static half_t from_float(float v) { return half_t(v); }
};
// bfloat16 goes through float the same way (kIsHalf: a 16-bit float type).
template <>
struct HalfOps<bf16_t> {
  static constexpr bool kIsHalf = true;
  static float to_float(bf16_t v) { return static_cast<float>(v); }
  static bf16_t from_float(float v) { return bf16_t(v); }
};

// One value converted as Cast does (MXNet's static_cast on x86): float16
// through float; floating values bound for an integer type through int64,
// so that out-of-range values wrap (-1.7 -> 255 as uint8) and NaN, infinities
// and values beyond int64 become 0.
template <typename To, typename From>
MX_HOST_DEVICE To convert_value(From v) {
  if constexpr (HalfOps<From>::kIsHalf) {
    return convert_value<To>(HalfOps<From>::to_float(v));
  } else if constexpr (HalfOps<To>::kIsHalf) {
    return HalfOps<To>::from_float(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v > From(-9.2e18) && v < From(9.2e18))) return To(0);
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

// *dst (req) value, adding in float for float16 and with the integer
// promotions otherwise (as the CPU kernels' store()).
template <typename T>
MX_HOST_DEVICE void store_value(T* dst, OpReq req, T value) {
  if (req == OpReq::kAdd) {
    if constexpr (HalfOps<T>::kIsHalf)
      *dst = HalfOps<T>::from_float(HalfOps<T>::to_float(*dst) + HalfOps<T>::to_float(value));
    else
      *dst = static_cast<T>(*dst + value);
  } else if (req != OpReq::kNull) {
    *dst = value;
  }
}

// ---- copies of row blocks: slice_axis, Concat, SliceChannel ---------------------

// For r in [0, rows) and j in [0, len):
//   dst[r * dst_stride + dst_offset + j] (req) src[r * src_stride + src_offset + j].
struct RowBlocks {
  int64_t rows = 0, len = 0;
  int64_t dst_stride = 0, dst_offset = 0;
  int64_t src_stride = 0, src_offset = 0;
};

// A part of an array joined along an axis is a block of `len` elements at
// `offset` within each of the `outer` rows (of `row` elements) of the joined
// array: a slice, a Concat input, a SliceChannel output. part_to_dense reads
// it into a dense array, dense_to_part writes a dense array into it.
inline RowBlocks part_to_dense(int64_t outer, int64_t row, int64_t offset, int64_t len) {
  return {outer, len, len, 0, row, offset};
}
inline RowBlocks dense_to_part(int64_t outer, int64_t row, int64_t offset, int64_t len) {
  return {outer, len, row, offset, len, 0};
}

// Element i = r * len + j of the RowBlocks copy.
template <typename T>
struct RowBlockCopy {
  T* dst;
  const T* src;
  RowBlocks b;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t r = i / b.len, j = i - r * b.len;
    store_value(dst + r * b.dst_stride + b.dst_offset + j, req,
                src[r * b.src_stride + b.src_offset + j]);
  }
};

// dst[i] (req) src[i]: the reshaping operators' kAdd (their kWrite is a memcpy).
template <typename T>
struct AddCopy {
  T* dst;
  const T* src;
  MX_HOST_DEVICE void operator()(int64_t i) const { store_value(dst + i, OpReq::kAdd, src[i]); }
};

// ---- transpose ----------------------------------------------------------------

inline constexpr int kMaxTransposeDims = 10;

// Output element i -> the input element it copies. Output axis d has size
// dims[d] and steps in_stride[d] elements through the input.
struct TransposeIndex {
  int ndim = 0;
  int64_t dims[kMaxTransposeDims] = {};
  int64_t in_stride[kMaxTransposeDims] = {};
  MX_HOST_DEVICE int64_t operator()(int64_t i) const {
    int64_t offset = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t q = i / dims[d];
      offset += (i - q * dims[d]) * in_stride[d];
      i = q;
    }
    return offset;
  }
};

// The index map of a transpose of `in_shape` whose output axis d is input
// axis perm[d]. Size-1 axes are dropped (they move nothing); more than
// kMaxTransposeDims other axes is an error naming `where`.
inline TransposeIndex transpose_index(const Shape& in_shape, const std::vector<int>& perm,
                                      const char* where) {
  const int nd = in_shape.ndim();
  std::vector<int64_t> in_stride(static_cast<size_t>(nd));
  for (int64_t d = nd - 1, s = 1; d >= 0; --d) {
    in_stride[static_cast<size_t>(d)] = s;
    s *= in_shape[static_cast<int>(d)];
  }
  TransposeIndex index;
  for (int d = 0; d < nd; ++d) {
    const int a = perm[static_cast<size_t>(d)];
    if (in_shape[a] == 1) continue;
    if (index.ndim == kMaxTransposeDims)
      throw Error(str(where, ": transpose on the GPU supports at most ", kMaxTransposeDims,
                      " axes of size > 1, the input has shape ", in_shape.to_string()));
    index.dims[index.ndim] = in_shape[a];
    index.in_stride[index.ndim] = in_stride[static_cast<size_t>(a)];
    ++index.ndim;
  }
  return index;
}

template <typename T>
struct TransposeCopy {
  T* out;
  const T* in;
  TransposeIndex index;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { store_value(out + i, req, in[index(i)]); }
};

// A transpose whose input and output have different innermost axes, seen as
// 2-D transposes of (a, b) planes: a is the output's innermost axis (output
// stride 1, input stride a_in_stride), b the input's (input stride 1, output
// stride b_out_stride), and the other axes are numbered by r (rest_offsets).
// The GPU moves each plane in 32x32 tiles through shared memory, so that
// its reads run along b and its writes along a, both contiguous.
struct TransposeTiles {
  int64_t a_dim = 0, a_in_stride = 0;
  int64_t b_dim = 0, b_out_stride = 0;  // b_dim 0: no tiles (the innermost axes agree)
  int rest_ndim = 0;
  int64_t rest_dims[kMaxTransposeDims] = {};
  int64_t rest_in_stride[kMaxTransposeDims] = {};
  int64_t rest_out_stride[kMaxTransposeDims] = {};

  MX_HOST_DEVICE int64_t rest_count() const {
    int64_t n = 1;
    for (int k = 0; k < rest_ndim; ++k) n *= rest_dims[k];
    return n;
  }
  // The input and output offsets of the rest coordinates numbered r.
  MX_HOST_DEVICE void rest_offsets(int64_t r, int64_t& in, int64_t& out) const {
    in = 0;
    out = 0;
    for (int k = rest_ndim - 1; k >= 0; --k) {
      const int64_t q = r / rest_dims[k], c = r - q * rest_dims[k];
      in += c * rest_in_stride[k];
      out += c * rest_out_stride[k];
      r = q;
    }
  }
};

inline TransposeTiles transpose_tiles(const TransposeIndex& index) {
  TransposeTiles t;
  const int n = index.ndim;
  int b = -1;
  for (int d = 0; d < n; ++d)
    if (index.in_stride[d] == 1) b = d;
  if (n < 2 || b < 0 || b == n - 1) return t;
  int64_t out_stride[kMaxTransposeDims] = {};
  int64_t stride = 1;
  for (int d = n - 1; d >= 0; --d) {
    out_stride[d] = stride;
    stride *= index.dims[d];
  }
  t.a_dim = index.dims[n - 1];
  t.a_in_stride = index.in_stride[n - 1];
  t.b_dim = index.dims[b];
  t.b_out_stride = out_stride[b];
  for (int d = 0; d < n - 1; ++d) {
    if (d == b) continue;
    t.rest_dims[t.rest_ndim] = index.dims[d];
    t.rest_in_stride[t.rest_ndim] = index.in_stride[d];
    t.rest_out_stride[t.rest_ndim] = out_stride[d];
    ++t.rest_ndim;
  }
  return t;
}

// ---- one_hot ----------------------------------------------------------------

// Output element i = k * depth + j: on_value where j is index k's value
// (truncated toward zero), off_value elsewhere and for indices outside [0, depth).
template <typename T, typename I>
struct OneHot {
  T* out;
  const I* indices;
  int64_t depth;
  T on, off;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t k = i / depth, j = i - k * depth;
    const double v = convert_value<double>(indices[k]);
    const int64_t hot = v > -1.0 && v < static_cast<double>(depth) ? static_cast<int64_t>(v) : -1;
    store_value(out + i, req, j == hot ? on : off);
  }
};

// ---- Cast ----------------------------------------------------------------

template <typename To, typename From>
struct CastValues {
  To* out;
  const From* in;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    store_value(out + i, req, convert_value<To>(in[i]));
  }
};

}  // namespace mx::op::kernels
