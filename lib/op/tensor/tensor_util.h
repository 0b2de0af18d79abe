// Small kernels shared by the tensor operators: storing with a request for
// any element type (float16 included) and copying blocks of rows, the inner
// loop of Concat, SliceChannel, slice_axis and the reshaping operators.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "op/kernel_util.h"
#include "op/tensor_ref.h"

namespace mx::op {

// *dst (req) value; works for float16 (through float) and the integer types.
template <typename T>
inline void store(T* dst, OpReq req, T value) {
  if (req == OpReq::kAdd)
    *dst = static_cast<T>(*dst + value);
  else if (req != OpReq::kNull)
    *dst = value;
}

// For r in [0, rows): dst[r * dst_stride, +len) (req) src[r * src_stride, +len).
template <typename T>
void copy_blocks(T* dst, int64_t dst_stride, const T* src, int64_t src_stride, int64_t rows,
                 int64_t len, OpReq req) {
  if (req == OpReq::kNull || rows == 0 || len == 0) return;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / len);
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T* d = dst + r * dst_stride;
      const T* s = src + r * src_stride;
      if (req == OpReq::kAdd) {
        for (int64_t i = 0; i < len; ++i) d[i] = static_cast<T>(d[i] + s[i]);
      } else if (d != s) {
        std::memcpy(d, s, static_cast<size_t>(len) * sizeof(T));
      }
    }
  });
}

// dst (req) src for n elements of the same type.
template <typename T>
void copy_all(T* dst, const T* src, int64_t n, OpReq req) {
  // One row split into pieces so that large copies run in parallel.
  const int64_t piece = kParallelGrain;
  const int64_t rows = n / piece;
  copy_blocks(dst, piece, src, piece, rows, piece, req);
  copy_blocks(dst + rows * piece, 0, src + rows * piece, 0, 1, n - rows * piece, req);
}

}  // namespace mx::op
