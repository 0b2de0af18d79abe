// The order topk lists elements in and its per-row selection, shared by the
// CPU kernel (tensor/ordering.cc) and the GPU one (op/cuda/ordering_gpu.cu).
//
// Order: by value, largest first (smallest first with is_ascend), NaN after
// every number, ties by the lower index: a total order, so the result does
// not depend on the algorithm (MXNet leaves the order of ties to its sort).
//
// The data is seen as rows: row w = o * inner + j is elements
// data[o, 0..n, j] (stride inner). The GPU runs one block per row and k
// rounds; in each, every thread finds the first element of its share
// (e = t, t + threads, ...) that comes after the previous round's pick, and
// a tree merge finds the first of those: the round's pick.
#pragma once

#include <cstdint>
#include <type_traits>

#include "op/tensor/tensor_kernels.h"

namespace mx::op::kernels {

// The data seen as (outer, n, inner) rows of n along the searched axis,
// k picks per row.
struct TopKGeometry {
  int64_t outer = 1, n = 1, inner = 1, k = 1;
  int64_t rows() const { return outer * inner; }
};

// A value comparable on both devices: float16 through float.
template <typename T>
MX_HOST_DEVICE auto order_key(T v) {
  if constexpr (HalfOps<T>::kIsHalf)
    return HalfOps<T>::to_float(v);
  else
    return v;
}

template <typename K>
MX_HOST_DEVICE bool key_is_nan(K v) {
  if constexpr (std::is_integral_v<K>)
    return false;
  else
    return v != v;
}

// Whether (a, ia) comes before (b, ib) in topk's order.
template <typename T>
MX_HOST_DEVICE bool topk_before(T a, int64_t ia, T b, int64_t ib, bool ascend) {
  const auto ka = order_key(a), kb = order_key(b);
  const bool an = key_is_nan(ka), bn = key_is_nan(kb);
  if (an != bn) return bn;
  if (!an && ka != kb) return ascend ? ka < kb : ka > kb;
  return ia < ib;
}

// An element of a row; index -1 is none.
template <typename T>
struct TopKPick {
  T value;
  int64_t index;
};

// Where topk writes; a null pointer is an output the mode has not.
template <typename T, typename I>
struct TopKOutputs {
  T* values = nullptr;   // (outer, k, inner)
  I* indices = nullptr;  // (outer, k, inner), in the dtype parameter's type
  T* mask = nullptr;     // the data's shape; 0 already written (or kept when adding)
  OpReq values_req = OpReq::kNull, indices_req = OpReq::kNull, mask_req = OpReq::kNull;
};

template <typename T, typename I>
struct TopKRows {
  const T* data;
  int64_t n, inner, k;
  bool ascend;
  TopKOutputs<T, I> out;

  MX_HOST_DEVICE T element(int64_t row, int64_t e) const {
    return data[(row / inner) * n * inner + e * inner + row % inner];
  }
  // The earlier of two picks (a pick of index -1 comes last).
  MX_HOST_DEVICE TopKPick<T> first(TopKPick<T> a, TopKPick<T> b) const {
    if (a.index < 0) return b;
    if (b.index < 0) return a;
    return topk_before(b.value, b.index, a.value, a.index, ascend) ? b : a;
  }
  // The first element among e = t, t + threads, ... after `prev` (none yet: index -1).
  MX_HOST_DEVICE TopKPick<T> next(int64_t row, int t, int threads, TopKPick<T> prev) const {
    TopKPick<T> best{data[0], -1};
    for (int64_t e = t; e < n; e += threads) {
      const T v = element(row, e);
      if (prev.index >= 0 && !topk_before(prev.value, prev.index, v, e, ascend)) continue;
      best = first(best, TopKPick<T>{v, e});
    }
    return best;
  }
  // Writes pick r of the row.
  MX_HOST_DEVICE void write(int64_t row, int64_t r, TopKPick<T> pick) const {
    const int64_t o = row / inner, j = row % inner;
    const int64_t at = (o * k + r) * inner + j;
    if (out.values) store_value(out.values + at, out.values_req, pick.value);
    if (out.indices)
      store_value(out.indices + at, out.indices_req,
                  convert_value<I>(static_cast<double>(pick.index)));
    if (out.mask)
      store_value(out.mask + (o * n + pick.index) * inner + j, out.mask_req, convert_value<T>(1.0));
  }
};

// grad[o, index, j] (req) g[o, r, j] for the picks of value/both (the
// indices are distinct within a row; grad is zero first unless adding).
template <typename T, typename I>
struct TopKScatter {
  T* grad;
  const T* g;
  const I* indices;
  int64_t n, inner, k;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t j = i % inner, rest = i / inner;
    const int64_t o = rest / k;
    const auto e = static_cast<int64_t>(convert_value<double>(indices[i]));
    store_value(grad + (o * n + e) * inner + j, req, g[i]);
  }
};

}  // namespace mx::op::kernels
