// The CPU side of the strided views of shape_kernels.h: a gather (forward)
// and a scatter (backward of a slice) that walk the view run by run along
// its innermost axis, copying whole contiguous runs at once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/parallel.h"
#include "op/kernel_util.h"
#include "op/tensor/shape_kernels.h"
#include "op/tensor/tensor_util.h"

namespace mx::op {

// Calls fn(k, offset, len, step) for each run k of the view's innermost
// axis: output elements [k * len, (k + 1) * len) are input elements
// offset, offset + step, ... The runs are split over the thread budget.
template <typename F>
void for_each_strided_run(const kernels::StridedIndex& index, int64_t n, F&& fn) {
  if (n == 0) return;
  const int last = index.ndim - 1;
  const int64_t len = last >= 0 ? index.dims[last] : 1;
  const int64_t step = last >= 0 ? index.strides[last] : 0;
  parallel_for(n / len, std::max<int64_t>(1, kParallelGrain / len), [&](int64_t r0, int64_t r1) {
    for (int64_t k = r0; k < r1; ++k) fn(k, index(k * len), len, step);
  });
}

// out[i] (req) in[index(i)] for the n output elements.
template <typename T>
void strided_gather(T* out, const T* in, const kernels::StridedIndex& index, int64_t n, OpReq req) {
  if (req == OpReq::kNull) return;
  for_each_strided_run(index, n, [&](int64_t k, int64_t offset, int64_t len, int64_t step) {
    T* dst = out + k * len;
    const T* src = in + offset;
    if (req == OpReq::kAdd) {
      for (int64_t j = 0; j < len; ++j) store(dst + j, req, src[j * step]);
    } else if (step == 1) {
      std::memcpy(dst, src, static_cast<size_t>(len) * sizeof(T));
    } else if (step == 0) {
      std::fill(dst, dst + len, *src);
    } else {
      for (int64_t j = 0; j < len; ++j) dst[j] = src[j * step];
    }
  });
}

// out[index(i)] (req) in[i] for the n elements of `in`; the view's elements
// must be distinct (no zero strides).
template <typename T>
void strided_scatter(T* out, const T* in, const kernels::StridedIndex& index, int64_t n,
                     OpReq req) {
  if (req == OpReq::kNull) return;
  for_each_strided_run(index, n, [&](int64_t k, int64_t offset, int64_t len, int64_t step) {
    T* dst = out + offset;
    const T* src = in + k * len;
    for (int64_t j = 0; j < len; ++j) store(dst + j * step, req, src[j]);
  });
}

}  // namespace mx::op
