// The reduction decomposition shared by the CPU reductions (reduce_to in
// broadcast_util.h) and the GPU ones (op/cuda/reduce_gpu.cu): reducers,
// ReduceIndex (where output o and its j-th reduced element live in the
// input), the per-output and per-block kernels, and the functors of the
// reductions' gradients and of argmax.
//
// The GPU reduces an output either with one thread looping over its `count`
// elements (ReduceSerialKernel) or with one block of a power-of-two number of
// threads (ReduceBlockKernel): thread t accumulates elements t, t + threads,
// ..., then the partials are merged pairwise in shared memory, halving the
// active threads each step. Both are written as functions of (output,
// thread) so the CPU tests run the same decomposition.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "base/host_device.h"
#include "base/shape.h"
#include "op/tensor/broadcast_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op {

// Reducers: an accumulator type, its start, adding one value, merging two
// partial results, and the value it ends as.
template <typename T>
struct SumReducer {
  // float32 sums accumulate in float64, as accurate as MXNet's Kahan sums.
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
  double scale = 1.0;  // mean: 1 / count
  MX_HOST_DEVICE Acc init() const { return Acc(0); }
  MX_HOST_DEVICE void add(Acc& acc, T v) const { acc += static_cast<Acc>(v); }
  MX_HOST_DEVICE void merge(Acc& acc, Acc other) const { acc += other; }
  MX_HOST_DEVICE T finish(Acc acc) const { return static_cast<T>(acc * static_cast<Acc>(scale)); }
};

// Max (or min with kMax false); NaN wins, as in MXNet.
template <typename T, bool kMax>
struct ExtremumReducer {
  using Acc = T;
  MX_HOST_DEVICE Acc init() const {
    return kMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  }
  MX_HOST_DEVICE void add(Acc& acc, T v) const {
    if (acc != acc) return;  // already NaN
    if (kMax ? !(acc >= v) : !(acc <= v)) acc = v;
  }
  MX_HOST_DEVICE void merge(Acc& acc, Acc other) const { add(acc, other); }
  MX_HOST_DEVICE T finish(Acc acc) const { return acc; }
};

// The norm of order 1 (sum of |x|) or 2 (sqrt of the sum of x^2),
// accumulated as SumReducer does.
template <typename T, int Ord>
struct NormReducer {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
  MX_HOST_DEVICE Acc init() const { return Acc(0); }
  MX_HOST_DEVICE void add(Acc& acc, T v) const {
    const Acc a = static_cast<Acc>(v);
    acc += Ord == 1 ? (a < Acc(0) ? -a : a) : a * a;
  }
  MX_HOST_DEVICE void merge(Acc& acc, Acc other) const { acc += other; }
  MX_HOST_DEVICE T finish(Acc acc) const { return static_cast<T>(Ord == 1 ? acc : std::sqrt(acc)); }
};

// A reduction of an input to out_size outputs of `count` elements each. The
// input's axes are merged into runs that are all kept or all reduced; kept
// axes number the outputs (row-major), reduced ones the elements of each.
// Built by make_reduce_index (broadcast_util.h).
struct ReduceIndex {
  int64_t out_size = 0;
  int64_t count = 0;
  int n_kept = 0;
  int n_reduced = 0;
  int64_t kept_dims[Shape::kMaxNdim] = {};
  int64_t kept_strides[Shape::kMaxNdim] = {};
  int64_t reduced_dims[Shape::kMaxNdim] = {};
  int64_t reduced_strides[Shape::kMaxNdim] = {};

  // Offset in the input of the first element of output o.
  MX_HOST_DEVICE int64_t kept_offset(int64_t o) const {
    int64_t off = 0;
    for (int i = n_kept - 1; i >= 0; --i) {
      off += (o % kept_dims[i]) * kept_strides[i];
      o /= kept_dims[i];
    }
    return off;
  }
  // Offset of element j of an output relative to its first element.
  MX_HOST_DEVICE int64_t reduced_offset(int64_t j) const {
    int64_t off = 0;
    for (int i = n_reduced - 1; i >= 0; --i) {
      off += (j % reduced_dims[i]) * reduced_strides[i];
      j /= reduced_dims[i];
    }
    return off;
  }
  // Whether the innermost reduced axis is contiguous in memory (a block of
  // threads then reads consecutive addresses).
  MX_HOST_DEVICE bool reduces_contiguously() const {
    return n_reduced > 0 && reduced_strides[n_reduced - 1] == 1;
  }
};

// out[o] (req) the reduction of output o's elements, in order, by one thread.
template <typename T, typename R>
struct ReduceSerialKernel {
  ReduceIndex index;
  R reducer;
  const T* in;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    typename R::Acc acc = reducer.init();
    const T* base = in + index.kept_offset(o);
    for (int64_t j = 0; j < index.count; ++j) reducer.add(acc, base[index.reduced_offset(j)]);
    assign(out + o, req, reducer.finish(acc));
  }
};

// One block of `threads` (a power of two) per output.
template <typename T, typename R>
struct ReduceBlockKernel {
  using Acc = typename R::Acc;
  ReduceIndex index;
  R reducer;
  const T* in;
  T* out;
  OpReq req;

  // Thread t's partial result: elements t, t + threads, ... of output o.
  MX_HOST_DEVICE Acc partial(int64_t o, int t, int threads) const {
    return partial_from(o, t, threads);
  }
  // Elements first, first + step, ... of output o (a split reduction's
  // block `part` of `parts`: first = part * threads + t, step = parts * threads).
  MX_HOST_DEVICE Acc partial_from(int64_t o, int64_t first, int64_t step) const {
    Acc acc = reducer.init();
    const T* base = in + index.kept_offset(o);
    for (int64_t j = first; j < index.count; j += step)
      reducer.add(acc, base[index.reduced_offset(j)]);
    return acc;
  }
  // One step of the tree: thread t < stride merges the partial of t + stride.
  MX_HOST_DEVICE void combine(Acc* partials, int t, int stride) const {
    reducer.merge(partials[t], partials[t + stride]);
  }
  MX_HOST_DEVICE void write(int64_t o, Acc total) const {
    assign(out + o, req, reducer.finish(total));
  }
};

// Threads per output of a GPU reduction: 0 (one thread per output, looping)
// when each output has few elements, or when outputs are many and their
// elements strided (neighbouring threads then read neighbouring outputs);
// otherwise a block of kReduceBlockThreads per output.
inline constexpr int kReduceBlockThreads = 256;
inline int reduce_block_threads(const ReduceIndex& index) {
  if (index.count < 64) return 0;
  if (index.reduces_contiguously() || index.out_size < 1024) return kReduceBlockThreads;
  return 0;
}

// Blocks per output of a GPU block reduction: where the outputs are fewer
// than a GPU's multiprocessors and long, each output's elements are split
// among up to 1024 blocks in all (each thread still taking 16 or more), and
// a second pass merges every output's parts in order (the same result every
// run). 1: one block per output.
inline int64_t reduce_split_parts(const ReduceIndex& index, int threads) {
  if (threads == 0 || index.out_size == 0 || index.out_size >= 128) return 1;
  const int64_t by_blocks = 1024 / index.out_size;
  const int64_t by_work = index.count / (static_cast<int64_t>(threads) * 16);
  const int64_t parts = by_blocks < by_work ? by_blocks : by_work;
  return parts < 1 ? 1 : parts;
}

// ---- gradients ---------------------------------------------------------------

// dx[o] (req) g[s] * scale, s the output element that input element o went
// into (index: the input's shape, operand 0 the output's kept shape): the
// gradient of sum and mean.
template <typename T>
struct SpreadGradKernel {
  BroadcastIndex<1> index;
  T scale;
  const T* g;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    int64_t s[1];
    index.offsets(o, s);
    assign(dx + o, req, g[s[0]] * scale);
  }
};

// The gradient of max and min: to every input element equal to the result.
template <typename T>
struct ExtremumGradKernel {
  BroadcastIndex<1> index;
  const T* g;
  const T* x;
  const T* y;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    int64_t s[1];
    index.offsets(o, s);
    assign(dx + o, req, x[o] == y[s[0]] ? g[s[0]] : T(0));
  }
};

// The gradient of norm: g * sign(x) (order 1) or g * x / y (order 2; 0
// where the norm y is 0, a subgradient, where MXNet gives NaN).
template <typename T>
MX_HOST_DEVICE inline T norm_derivative(int ord, T x, T y) {
  if (ord == 1) return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  return y == T(0) ? T(0) : x / y;
}

template <typename T>
struct NormGradKernel {
  BroadcastIndex<1> index;
  int ord;
  const T* g;
  const T* x;
  const T* y;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    int64_t s[1];
    index.offsets(o, s);
    assign(dx + o, req, g[s[0]] * norm_derivative(ord, x[o], y[s[0]]));
  }
};

// ---- argmax --------------------------------------------------------------------

template <typename T>
MX_HOST_DEVICE inline bool argmax_is_nan(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return v != v;
}

// An index written in the value type, as MXNet does (float16 through float).
template <typename T>
MX_HOST_DEVICE inline T argmax_index_as(int64_t i) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(i);
  else
    return T(static_cast<float>(i));
}

// Input viewed as (outer, size, inner); element e = o * inner + j of the
// output is the index of the first largest value of x[o, :, j] (NaN counts
// as the largest, as in NumPy and MXNet). size > 0.
template <typename T>
struct ArgmaxKernel {
  const T* in;
  T* out;
  OpReq req;
  int64_t size;
  int64_t inner;
  MX_HOST_DEVICE void operator()(int64_t e) const {
    const int64_t o = e / inner, j = e % inner;
    const T* p = in + o * size * inner + j;
    T best = p[0];
    int64_t index = 0;
    for (int64_t k = 1; k < size; ++k) {
      const T v = p[k * inner];
      if (!argmax_is_nan(best) && (v > best || argmax_is_nan(v))) {
        best = v;
        index = k;
      }
    }
    // Through the arithmetic type of T: float16 and the narrow integers
    // have no += of their own.
    const T value = argmax_index_as<T>(index);
    if (req == OpReq::kAdd)
      out[e] = T(out[e] + value);
    else if (req != OpReq::kNull)
      out[e] = value;
  }
};

}  // namespace mx::op
