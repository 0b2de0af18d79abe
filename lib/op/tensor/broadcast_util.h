// Broadcasting and reduction over aligned shapes, shared by the broadcast_*
// operators, the reductions and their gradients. Shapes are aligned to the
// right (NumPy rules) and adjacent axes that broadcast the same way for every
// operand are merged, so most loops run over one or two long axes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "base/parallel.h"
#include "base/shape.h"
#include "op/kernel_util.h"
#include "op/tensor/broadcast_kernels.h"
#include "op/tensor/reduce_kernels.h"
#include "op/tensor/tensor_util.h"

namespace mx::op {

// `shape` with leading 1s up to `ndim` dimensions.
inline Shape pad_left(const Shape& shape, int ndim) {
  std::vector<int64_t> dims(static_cast<size_t>(ndim - shape.ndim()), 1);
  for (int64_t d : shape) dims.push_back(d);
  return Shape(dims);
}

// An element-wise map from N operands that broadcast to the output's shape:
// the merged axes and strides (BroadcastIndex, which the GPU kernels get)
// and the CPU's loop over runs of the innermost axis.
template <int N>
struct BroadcastLayout : BroadcastIndex<N> {
  using BroadcastIndex<N>::ndim;
  using BroadcastIndex<N>::dims;
  using BroadcastIndex<N>::strides;
  int64_t size = 0;

  BroadcastLayout(const Shape& out, const std::array<Shape, N>& operands) {
    size = out.size();
    const int nd = out.ndim();
    std::array<Shape, N> ops;
    for (int k = 0; k < N; ++k) {
      MX_CHECK(operands[k].ndim() <= nd, "operand ", operands[k], " has more axes than ", out);
      ops[k] = pad_left(operands[k], nd);
    }
    // Merged axes; each operand is either full (1) or broadcast (0) on one.
    std::array<std::array<bool, Shape::kMaxNdim>, N> full{};
    ndim = 0;
    for (int i = 0; i < nd; ++i) {
      if (out[i] == 1) continue;  // contributes nothing to any index
      std::array<bool, N> f{};
      for (int k = 0; k < N; ++k) {
        MX_CHECK(ops[k][i] == out[i] || ops[k][i] == 1, "operand ", operands[k],
                 " does not broadcast to ", out);
        f[k] = ops[k][i] != 1;
      }
      bool merge = ndim > 0;
      for (int k = 0; k < N && merge; ++k) merge = full[k][ndim - 1] == f[k];
      if (merge) {
        dims[ndim - 1] *= out[i];
      } else {
        dims[ndim] = out[i];
        for (int k = 0; k < N; ++k) full[k][ndim] = f[k];
        ++ndim;
      }
    }
    if (ndim == 0) {  // a single element
      ndim = 1;
      dims[0] = 1;
      for (int k = 0; k < N; ++k) full[k][0] = true;
    }
    for (int k = 0; k < N; ++k) {
      int64_t stride = 1;
      for (int i = ndim - 1; i >= 0; --i) {
        strides[k][i] = full[k][i] ? stride : 0;
        if (full[k][i]) stride *= dims[i];
      }
    }
  }

  // Calls f(out_index, offsets, len, inner_strides) for the runs of output
  // elements in [begin, end) along the innermost merged axis: element
  // out_index + j reads operand k at offsets[k] + j * inner_strides[k].
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end) return;
    std::array<int64_t, Shape::kMaxNdim> idx{};
    std::array<int64_t, N> offsets{}, inner{};
    int64_t rest = begin;
    for (int i = ndim - 1; i >= 0; --i) {
      idx[i] = rest % dims[i];
      rest /= dims[i];
      for (int k = 0; k < N; ++k) offsets[k] += idx[i] * strides[k][i];
    }
    for (int k = 0; k < N; ++k) inner[k] = strides[k][ndim - 1];
    const int last = ndim - 1;
    int64_t pos = begin;
    while (pos < end) {
      const int64_t len = std::min(dims[last] - idx[last], end - pos);
      f(pos, offsets, len, inner);
      pos += len;
      idx[last] += len;
      for (int k = 0; k < N; ++k) offsets[k] += len * inner[k];
      // Carry into the outer axes.
      for (int i = last; i > 0 && idx[i] == dims[i]; --i) {
        idx[i] = 0;
        ++idx[i - 1];
        for (int k = 0; k < N; ++k) offsets[k] += strides[k][i - 1] - dims[i] * strides[k][i];
      }
    }
  }

  // for_each_run over all output elements, split over the thread budget.
  template <typename F>
  void parallel_runs(F&& f) const {
    parallel_for(size, kParallelGrain,
                 [&](int64_t begin, int64_t end) { for_each_run(begin, end, f); });
  }
};

// The ReduceIndex of reducing `in_shape` to `out_shape` (in_shape with 1 on
// the reduced axes, possibly with fewer leading axes).
inline ReduceIndex make_reduce_index(const Shape& in_shape, const Shape& out_shape) {
  const int nd = in_shape.ndim();
  MX_CHECK(out_shape.ndim() <= nd, "cannot reduce ", in_shape, " to ", out_shape);
  const Shape small = pad_left(out_shape, nd);
  // Merged axes, alternating kept and reduced.
  std::array<int64_t, Shape::kMaxNdim> dims{};
  std::array<bool, Shape::kMaxNdim> reduced{};
  int n = 0;
  for (int i = 0; i < nd; ++i) {
    if (in_shape[i] == 1) continue;
    MX_CHECK(small[i] == in_shape[i] || small[i] == 1, "cannot reduce ", in_shape, " to ",
             out_shape);
    const bool red = small[i] == 1;
    if (n > 0 && reduced[static_cast<size_t>(n - 1)] == red) {
      dims[static_cast<size_t>(n - 1)] *= in_shape[i];
    } else {
      dims[static_cast<size_t>(n)] = in_shape[i];
      reduced[static_cast<size_t>(n)] = red;
      ++n;
    }
  }
  ReduceIndex index;
  int64_t stride = 1;
  std::array<int64_t, Shape::kMaxNdim> strides{};
  for (int i = n - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = stride;
    stride *= dims[static_cast<size_t>(i)];
  }
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<size_t>(i);
    if (reduced[u]) {
      index.reduced_dims[index.n_reduced] = dims[u];
      index.reduced_strides[index.n_reduced++] = strides[u];
    } else {
      index.kept_dims[index.n_kept] = dims[u];
      index.kept_strides[index.n_kept++] = strides[u];
    }
  }
  index.out_size = out_shape.size();
  index.count = index.out_size == 0 ? 0 : in_shape.size() / index.out_size;
  return index;
}

// Reduces `in` (shape in_shape) to `out` (shape out_shape, as for
// make_reduce_index). Each output element is reduced in a fixed order by one
// thread, so results are reproducible.
template <typename T, typename Reducer>
void reduce_to(const T* in, const Shape& in_shape, T* out, const Shape& out_shape, OpReq req,
               const Reducer& r) {
  using Acc = typename Reducer::Acc;
  if (req == OpReq::kNull) return;
  const ReduceIndex index = make_reduce_index(in_shape, out_shape);
  const int64_t total = in_shape.size();
  const int64_t out_size = index.out_size;
  if (total == 0) {
    for (int64_t o = 0; o < out_size; ++o) store(out + o, req, r.finish(r.init()));
    return;
  }
  if (index.n_kept == 0 && index.n_reduced == 0) {  // one element
    Acc acc = r.init();
    r.add(acc, in[0]);
    store(out, req, r.finish(acc));
    return;
  }
  const int64_t count = index.count;
  if (count == 1) {
    // Nothing is reduced (a broadcast operator's gradient into an input of
    // the output's shape): element by element, in a loop that vectorises.
    map_index(out, total, req, [r, in](int64_t i) {
      Acc acc = r.init();
      r.add(acc, in[i]);
      return r.finish(acc);
    });
    return;
  }
  if (index.reduces_contiguously()) {
    const int64_t inner = index.reduced_dims[index.n_reduced - 1];
    if (index.n_kept == 0 && index.n_reduced == 1) {
      // Everything into one value: fixed blocks summed in parallel, then
      // merged in order (the same result on any number of threads).
      const int64_t block = kParallelGrain;
      const int64_t blocks = (total + block - 1) / block;
      std::vector<Acc> partial(static_cast<size_t>(blocks), r.init());
      parallel_for(blocks, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          Acc acc = r.init();
          const int64_t end = std::min(total, (b + 1) * block);
          for (int64_t i = b * block; i < end; ++i) r.add(acc, in[i]);
          partial[static_cast<size_t>(b)] = acc;
        }
      });
      Acc acc = r.init();
      for (const Acc& p : partial) r.merge(acc, p);
      store(out, req, r.finish(acc));
      return;
    }
    // Offsets of the contiguous runs of each output's elements.
    std::vector<int64_t> runs(static_cast<size_t>(count / inner));
    for (size_t k = 0; k < runs.size(); ++k)
      runs[k] = index.reduced_offset(static_cast<int64_t>(k) * inner);
    parallel_for(out_size, std::max<int64_t>(1, kParallelGrain / count),
                 [&](int64_t o0, int64_t o1) {
                   for (int64_t o = o0; o < o1; ++o) {
                     const T* base = in + index.kept_offset(o);
                     Acc acc = r.init();
                     for (int64_t off : runs) {
                       const T* p = base + off;
                       for (int64_t j = 0; j < inner; ++j) r.add(acc, p[j]);
                     }
                     store(out + o, req, r.finish(acc));
                   }
                 });
    return;
  }
  // The innermost axis is kept: accumulate runs of it as vectors.
  const int64_t inner = index.kept_dims[index.n_kept - 1];
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  for (size_t k = 0; k < offsets.size(); ++k)
    offsets[k] = index.reduced_offset(static_cast<int64_t>(k));
  const int64_t piece = std::min<int64_t>(inner, 1024);
  const int64_t pieces = (inner + piece - 1) / piece;
  const int64_t outer = out_size / inner;
  parallel_for(outer * pieces, std::max<int64_t>(1, kParallelGrain / (count * piece)),
               [&](int64_t w0, int64_t w1) {
                 std::vector<Acc> acc(static_cast<size_t>(piece));
                 for (int64_t w = w0; w < w1; ++w) {
                   const int64_t p = w / pieces;
                   const int64_t first = (w % pieces) * piece;
                   const int64_t len = std::min(piece, inner - first);
                   std::fill(acc.begin(), acc.end(), r.init());
                   const T* base = in + index.kept_offset(p * inner + first);
                   for (int64_t off : offsets) {
                     const T* src = base + off;
                     for (int64_t j = 0; j < len; ++j) r.add(acc[static_cast<size_t>(j)], src[j]);
                   }
                   T* dst = out + p * inner + first;
                   for (int64_t j = 0; j < len; ++j)
                     store(dst + j, req, r.finish(acc[static_cast<size_t>(j)]));
                 }
               });
}

}  // namespace mx::op
