// Per-element logic of Embedding's GPU kernels: the gather of weight rows
// (forward) and the scatter-add of the output gradient into the weight
// gradient (backward). Shared by the .cu, the CPU operator (row_of) and the
// CPU tests.
#pragma once

#include <cstdint>

#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// Calls fn(typed index pointer) for Embedding's index types (every dtype but
// float16 and bfloat16), for the CPU operator and the GPU kernels alike.
template <typename Fn>
void dispatch_embedding_index(const TensorRef& t, Fn&& fn) {
  dispatch_dtype(t.dtype, [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (is_half_like_v<I>)
      throw Error("Embedding: float16 and bfloat16 indices are not supported");
    else
      fn(t.ptr<I>());
  });
}

// The weight row read for index value v: truncated, then clipped into
// [0, rows) as MXNet does (negative values, fractions below 1 and NaN: row 0).
template <typename I>
MX_HOST_DEVICE int64_t embedding_row(I v, int64_t rows) {
  const double d = static_cast<double>(v);
  if (!(d >= 1)) return 0;
  if (d >= static_cast<double>(rows)) return rows - 1;
  return static_cast<int64_t>(d);
}

// y[k, j] (req) weight[row(indices[k]), j] for output element i = k * dim + j.
template <typename T, typename I>
struct EmbeddingGather {
  T* y;
  const T* weight;
  const I* indices;
  int64_t rows, dim;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t k = i / dim, j = i - k * dim;
    store_value(y + i, req, weight[embedding_row(indices[k], rows) * dim + j]);
  }
};

// *dst += v, atomically on the GPU (several indices may name one row).
template <typename T>
MX_HOST_DEVICE void add_atomic(T* dst, T v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(dst, v);
#else
  *dst += v;
#endif
}

// dweight[row(indices[k]), j] += dy[k, j] for output-gradient element i = k * dim + j.
template <typename T, typename I>
struct EmbeddingScatterAdd {
  T* dweight;
  const T* dy;
  const I* indices;
  int64_t rows, dim;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t k = i / dim, j = i - k * dim;
    add_atomic(dweight + embedding_row(indices[k], rows) * dim + j, dy[i]);
  }
};

}  // namespace mx::op::kernels
