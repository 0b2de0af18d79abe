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
#include "op/tensor/tensor_util.h"

namespace mx::op {

// `shape` with leading 1s up to `ndim` dimensions.
inline Shape pad_left(const Shape& shape, int ndim) {
  std::vector<int64_t> dims(static_cast<size_t>(ndim - shape.ndim()), 1);
  for (int64_t d : shape) dims.push_back(d);
  return Shape(dims);
}

// An element-wise map from N operands that broadcast to the output's shape.
template <int N>
struct BroadcastLayout {
  int ndim = 1;
  int64_t size = 0;
  std::array<int64_t, Shape::kMaxNdim> dims{};
  // Per operand, the stride of each merged axis (0 where it broadcasts).
  std::array<std::array<int64_t, Shape::kMaxNdim>, N> strides{};

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

// Reducers for reduce_to: an accumulator type, its start, adding one value,
// merging two partial results, and the value it ends as.
template <typename T>
struct SumReducer {
  // float32 sums accumulate in float64, as accurate as MXNet's Kahan sums.
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
  double scale = 1.0;  // mean: 1 / count
  Acc init() const { return Acc(0); }
  void add(Acc& acc, T v) const { acc += static_cast<Acc>(v); }
  void merge(Acc& acc, Acc other) const { acc += other; }
  T finish(Acc acc) const { return static_cast<T>(acc * static_cast<Acc>(scale)); }
};

// Max (or min with kMax false); NaN wins, as in MXNet.
template <typename T, bool kMax>
struct ExtremumReducer {
  using Acc = T;
  Acc init() const {
    return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  }
  void add(Acc& acc, T v) const {
    if (acc != acc) return;  // already NaN
    if (kMax ? !(acc >= v) : !(acc <= v)) acc = v;
  }
  void merge(Acc& acc, Acc other) const { add(acc, other); }
  T finish(Acc acc) const { return acc; }
};

// Reduces `in` (shape in_shape) to `out` (shape out_shape: in_shape with 1 on
// the reduced axes, possibly with fewer leading axes). Each output element
// is reduced in a fixed order by one thread, so results are reproducible.
template <typename T, typename Reducer>
void reduce_to(const T* in, const Shape& in_shape, T* out, const Shape& out_shape, OpReq req,
               const Reducer& r) {
  using Acc = typename Reducer::Acc;
  if (req == OpReq::kNull) return;
  const int nd = in_shape.ndim();
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
    if (n > 0 && reduced[n - 1] == red) {
      dims[n - 1] *= in_shape[i];
    } else {
      dims[n] = in_shape[i];
      reduced[n] = red;
      ++n;
    }
  }
  const int64_t total = in_shape.size();
  const int64_t out_size = out_shape.size();
  if (total == 0) {
    for (int64_t o = 0; o < out_size; ++o) store(out + o, req, r.finish(r.init()));
    return;
  }
  if (n == 0) {  // one element
    Acc acc = r.init();
    r.add(acc, in[0]);
    store(out, req, r.finish(acc));
    return;
  }
  std::array<int64_t, Shape::kMaxNdim> stride{};
  for (int64_t i = n - 1, s = 1; i >= 0; --i) {
    stride[static_cast<size_t>(i)] = s;
    s *= dims[static_cast<size_t>(i)];
  }
  const bool inner_reduced = reduced[n - 1];
  const int64_t inner = dims[n - 1];
  // Offsets of every combination of the reduced axes (the innermost one
  // excluded when it is reduced: it is the contiguous run).
  std::vector<int64_t> red_offsets{0};
  for (int i = 0; i < (inner_reduced ? n - 1 : n); ++i) {
    if (!reduced[i]) continue;
    std::vector<int64_t> next;
    next.reserve(red_offsets.size() * static_cast<size_t>(dims[i]));
    for (int64_t base : red_offsets)
      for (int64_t j = 0; j < dims[i]; ++j) next.push_back(base + j * stride[i]);
    red_offsets = std::move(next);
  }
  // Offset in `in` of the first element that output position `o` of the
  // kept axes (the innermost excluded when kept: it is the run) reads.
  auto kept_base = [&](int64_t o) {
    int64_t base = 0;
    for (int i = (inner_reduced ? n - 1 : n - 2); i >= 0; --i) {
      if (reduced[i]) continue;
      base += (o % dims[i]) * stride[i];
      o /= dims[i];
    }
    return base;
  };
  const int64_t count = total / out_size;
  if (inner_reduced) {
    if (n == 1) {
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
    parallel_for(out_size, std::max<int64_t>(1, kParallelGrain / count),
                 [&](int64_t o0, int64_t o1) {
                   for (int64_t o = o0; o < o1; ++o) {
                     const int64_t base = kept_base(o);
                     Acc acc = r.init();
                     for (int64_t off : red_offsets) {
                       const T* p = in + base + off;
                       for (int64_t j = 0; j < inner; ++j) r.add(acc, p[j]);
                     }
                     store(out + o, req, r.finish(acc));
                   }
                 });
    return;
  }
  // The innermost axis is kept: accumulate runs of it as vectors.
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
                   const int64_t base = kept_base(p) + first;
                   for (int64_t off : red_offsets) {
                     const T* src = in + base + off;
                     for (int64_t j = 0; j < len; ++j) r.add(acc[static_cast<size_t>(j)], src[j]);
                   }
                   T* dst = out + p * inner + first;
                   for (int64_t j = 0; j < len; ++j)
                     store(dst + j, req, r.finish(acc[static_cast<size_t>(j)]));
                 }
               });
}

}  // namespace mx::op
