// The CPU transpose: any permutation of any element type, with adjacent
// axes that stay together merged and cache-sized tiles where the innermost
// output axis is strided in the input. Used by transpose and SwapAxis.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/parallel.h"
#include "op/kernel_util.h"
#include "op/tensor/tensor_util.h"

namespace mx::op {

// out = in with its axes permuted (output axis i is input axis perm[i]).
template <typename T>
void transpose_kernel(const T* in, const Shape& in_shape, const std::vector<int>& perm, T* out,
                      OpReq req) {
  if (req == OpReq::kNull) return;
  const int nd = in_shape.ndim();
  std::vector<int64_t> in_stride(static_cast<size_t>(nd));
  for (int64_t i = nd - 1, s = 1; i >= 0; --i) {
    in_stride[static_cast<size_t>(i)] = s;
    s *= in_shape[static_cast<int>(i)];
  }
  // Merge output axes that are also consecutive in the input; drop 1s.
  std::vector<int64_t> dims, stride;  // per merged output axis: size, input stride
  int prev = -2;
  for (int i = 0; i < nd; ++i) {
    const int a = perm[static_cast<size_t>(i)];
    if (in_shape[a] == 1) continue;
    if (!dims.empty() && a == prev + 1) {
      dims.back() *= in_shape[a];
      stride.back() = in_stride[static_cast<size_t>(a)];
    } else {
      dims.push_back(in_shape[a]);
      stride.push_back(in_stride[static_cast<size_t>(a)]);
    }
    prev = a;
  }
  const int64_t total = in_shape.size();
  if (dims.empty() || stride.back() == 1) {
    // The innermost output axis is contiguous in the input: copy rows.
    const int64_t row = dims.empty() ? 1 : dims.back();
    const int64_t rows = total / std::max<int64_t>(row, 1);
    parallel_for(rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(row, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     int64_t off = 0, rest = r;
                     for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
                       const auto k = static_cast<size_t>(i);
                       off += (rest % dims[k]) * stride[k];
                       rest /= dims[k];
                     }
                     for (int64_t j = 0; j < row; ++j) store(out + r * row + j, req, in[off + j]);
                   }
                 });
    return;
  }
  // Tiles of the innermost output axis and the output axis that is contiguous
  // in the input, so that both reads and writes stay in cache.
  const size_t m = dims.size();
  size_t c = 0;  // the merged output axis with input stride 1
  while (stride[c] != 1) ++c;
  const int64_t tile = 32;
  const int64_t rows_c = dims[c], cols = dims[m - 1];
  const int64_t blocks = total / (rows_c * cols);  // positions of the other axes
  const int64_t tiles_c = (rows_c + tile - 1) / tile, tiles_j = (cols + tile - 1) / tile;
  std::vector<int64_t> out_stride(m);
  for (int64_t i = static_cast<int64_t>(m) - 1, s = 1; i >= 0; --i) {
    out_stride[static_cast<size_t>(i)] = s;
    s *= dims[static_cast<size_t>(i)];
  }
  parallel_for(blocks * tiles_c * tiles_j, std::max<int64_t>(1, kParallelGrain / (tile * tile)),
               [&](int64_t w0, int64_t w1) {
                 for (int64_t w = w0; w < w1; ++w) {
                   const int64_t tj = w % tiles_j, tc = (w / tiles_j) % tiles_c;
                   int64_t rest = w / (tiles_j * tiles_c), in_off = 0, out_off = 0;
                   for (int64_t i = static_cast<int64_t>(m) - 2; i >= 0; --i) {
                     const auto k = static_cast<size_t>(i);
                     if (k == c) continue;
                     in_off += (rest % dims[k]) * stride[k];
                     out_off += (rest % dims[k]) * out_stride[k];
                     rest /= dims[k];
                   }
                   const int64_t c_end = std::min(rows_c, (tc + 1) * tile);
                   const int64_t j_end = std::min(cols, (tj + 1) * tile);
                   for (int64_t ci = tc * tile; ci < c_end; ++ci)
                     for (int64_t j = tj * tile; j < j_end; ++j)
                       store(out + out_off + ci * out_stride[c] + j, req,
                             in[in_off + ci + j * stride[m - 1]]);
                 }
               });
}

inline void transpose_any(const TensorRef& in, const std::vector<int>& perm, const TensorRef& out,
                          OpReq req) {
  dispatch_dtype(in.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    transpose_kernel(in.ptr<T>(), in.shape, perm, out.ptr<T>(), req);
  });
}

}  // namespace mx::op
