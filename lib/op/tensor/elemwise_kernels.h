// Per-element logic of the element-wise operators (tensor/elemwise.cc): each
// math function with its derivative, and one functor per kernel taking an
// element index. The CPU kernels run the functors through parallel_for (the
// float32 vmath paths aside), the GPU kernels (op/cuda/elemwise_gpu.cu)
// through launch_elements, so both compute exactly the same expressions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "base/bfloat16.h"
#include "base/host_device.h"
#include "op/compute_type.h"
#include "op/tensor_ref.h"

namespace mx::op {

// The logic kinds of each family (comparisons and logical operators, as in
// broadcast_kernels.h) give 1 or 0 in the operands' type, a nonzero operand
// (NaN too) counting as true, and have zero gradients, as in MXNet.
enum class Binary {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor
};

enum class WithScalar {
  kPlus,
  kMinus,
  kRMinus,
  kMul,
  kDiv,
  kRDiv,
  kPower,
  kRPower,
  kMaximum,
  kMinimum,
  kEqual,
  kNotEqual,
  kGreater,
  kGreaterEqual,
  kLesser,
  kLesserEqual,
  kLogicalAnd,
  kLogicalOr,
  kLogicalXor
};

enum class Unary {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kAbs,
  kNegative,
  kReciprocal,
  kIdentity,
  kErf,
  kLogicalNot
};

constexpr bool is_logic(Binary kind) { return kind >= Binary::kEqual; }
constexpr bool is_logic(WithScalar kind) { return kind >= WithScalar::kEqual; }
constexpr bool is_logic(Unary kind) { return kind == Unary::kLogicalNot; }

// Calls fn(std::integral_constant<Binary, kind>{}): the binary kernels are
// compiled per operation (on the CPU and the GPU).
template <typename Fn>
void with_binary(Binary kind, Fn&& fn) {
  using B = Binary;
  switch (kind) {
    case B::kAdd: return fn(std::integral_constant<B, B::kAdd>{});
    case B::kSub: return fn(std::integral_constant<B, B::kSub>{});
    case B::kMul: return fn(std::integral_constant<B, B::kMul>{});
    case B::kDiv: return fn(std::integral_constant<B, B::kDiv>{});
    case B::kEqual: return fn(std::integral_constant<B, B::kEqual>{});
    case B::kNotEqual: return fn(std::integral_constant<B, B::kNotEqual>{});
    case B::kGreater: return fn(std::integral_constant<B, B::kGreater>{});
    case B::kGreaterEqual: return fn(std::integral_constant<B, B::kGreaterEqual>{});
    case B::kLesser: return fn(std::integral_constant<B, B::kLesser>{});
    case B::kLesserEqual: return fn(std::integral_constant<B, B::kLesserEqual>{});
    case B::kLogicalAnd: return fn(std::integral_constant<B, B::kLogicalAnd>{});
    case B::kLogicalOr: return fn(std::integral_constant<B, B::kLogicalOr>{});
    case B::kLogicalXor: return fn(std::integral_constant<B, B::kLogicalXor>{});
  }
}

// ---- the math -------------------------------------------------------------

template <Binary K, typename T>
MX_HOST_DEVICE inline T binary_forward(T a, T b) {
  if constexpr (K == Binary::kAdd)
    return a + b;
  else if constexpr (K == Binary::kSub)
    return a - b;
  else if constexpr (K == Binary::kMul)
    return a * b;
  else if constexpr (K == Binary::kDiv)
    return a / b;
  else if constexpr (K == Binary::kEqual)
    return a == b ? T(1) : T(0);
  else if constexpr (K == Binary::kNotEqual)
    return a != b ? T(1) : T(0);
  else if constexpr (K == Binary::kGreater)
    return a > b ? T(1) : T(0);
  else if constexpr (K == Binary::kGreaterEqual)
    return a >= b ? T(1) : T(0);
  else if constexpr (K == Binary::kLesser)
    return a < b ? T(1) : T(0);
  else if constexpr (K == Binary::kLesserEqual)
    return a <= b ? T(1) : T(0);
  else if constexpr (K == Binary::kLogicalAnd)
    return a != T(0) && b != T(0) ? T(1) : T(0);
  else if constexpr (K == Binary::kLogicalOr)
    return a != T(0) || b != T(0) ? T(1) : T(0);
  else
    return (a != T(0)) != (b != T(0)) ? T(1) : T(0);
}

// The gradient of lhs (side 0) or rhs (side 1) from the output's gradient g;
// add and sub read neither a nor b. The logic kinds' backward only writes
// zeros and never calls this.
template <Binary K, typename T>
MX_HOST_DEVICE inline T binary_grad(int side, T g, T a, T b) {
  if constexpr (K == Binary::kAdd)
    return g;
  else if constexpr (K == Binary::kSub)
    return side == 0 ? g : -g;
  else if constexpr (K == Binary::kMul)
    return side == 0 ? g * b : g * a;
  else if constexpr (K == Binary::kDiv)
    return side == 0 ? g / b : -g * a / (b * b);
  else
    return T(0);
}

template <typename T>
MX_HOST_DEVICE inline T scalar_forward(WithScalar kind, T x, T s) {
  switch (kind) {
    case WithScalar::kPlus: return x + s;
    case WithScalar::kMinus: return x - s;
    case WithScalar::kRMinus: return s - x;
    case WithScalar::kMul: return x * s;
    case WithScalar::kDiv: return x / s;
    case WithScalar::kRDiv: return s / x;
    case WithScalar::kPower: return std::pow(x, s);
    case WithScalar::kRPower: return std::pow(s, x);
    case WithScalar::kMaximum: return x > s ? x : s;
    case WithScalar::kMinimum: return x < s ? x : s;
    case WithScalar::kEqual: return x == s ? T(1) : T(0);
    case WithScalar::kNotEqual: return x != s ? T(1) : T(0);
    case WithScalar::kGreater: return x > s ? T(1) : T(0);
    case WithScalar::kGreaterEqual: return x >= s ? T(1) : T(0);
    case WithScalar::kLesser: return x < s ? T(1) : T(0);
    case WithScalar::kLesserEqual: return x <= s ? T(1) : T(0);
    case WithScalar::kLogicalAnd: return x != T(0) && s != T(0) ? T(1) : T(0);
    case WithScalar::kLogicalOr: return x != T(0) || s != T(0) ? T(1) : T(0);
    case WithScalar::kLogicalXor: return (x != T(0)) != (s != T(0)) ? T(1) : T(0);
  }
  return x;
}

// d(out)/d(x) at x (y = forward(x)).
template <typename T>
MX_HOST_DEVICE inline T scalar_derivative(WithScalar kind, T x, T y, T s) {
  switch (kind) {
    case WithScalar::kPlus:
    case WithScalar::kMinus: return T(1);
    case WithScalar::kRMinus: return T(-1);
    case WithScalar::kMul: return s;
    case WithScalar::kDiv: return T(1) / s;
    case WithScalar::kRDiv: return -s / (x * x);
    case WithScalar::kPower: return s * std::pow(x, s - T(1));
    case WithScalar::kRPower: return y * std::log(s);
    case WithScalar::kMaximum: return x > s ? T(1) : T(0);
    case WithScalar::kMinimum: return x < s ? T(1) : T(0);
    default: return T(0);  // the logic kinds
  }
}

template <typename T>
MX_HOST_DEVICE inline T unary_forward(Unary kind, T x) {
  switch (kind) {
    case Unary::kRelu: return x > T(0) ? x : T(0);
    case Unary::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case Unary::kTanh: return std::tanh(x);
    case Unary::kExp: return std::exp(x);
    case Unary::kLog: return std::log(x);
    case Unary::kSqrt: return std::sqrt(x);
    case Unary::kSquare: return x * x;
    case Unary::kAbs: return std::abs(x);
    case Unary::kNegative: return -x;
    case Unary::kReciprocal: return T(1) / x;
    case Unary::kIdentity: return x;
    case Unary::kErf: return std::erf(x);
    case Unary::kLogicalNot: return x == T(0) ? T(1) : T(0);
  }
  return x;
}

template <typename T>
MX_HOST_DEVICE inline T unary_derivative(Unary kind, T x, T y) {
  switch (kind) {
    case Unary::kRelu: return x > T(0) ? T(1) : T(0);
    case Unary::kSigmoid: return y * (T(1) - y);
    case Unary::kTanh: return T(1) - y * y;
    case Unary::kExp: return y;
    case Unary::kLog: return T(1) / x;
    case Unary::kSqrt: return T(0.5) / y;
    case Unary::kSquare: return T(2) * x;
    case Unary::kAbs: return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case Unary::kNegative: return T(-1);
    case Unary::kReciprocal: return -y * y;
    case Unary::kIdentity: return T(1);
    // 2 / sqrt(pi) * exp(-x^2)
    case Unary::kErf: return T(1.1283791670955126) * std::exp(-x * x);
    case Unary::kLogicalNot: return T(0);
  }
  return T(0);
}

// ---- the kernels: functor(i) handles element i ------------------------------
// Each reads every input element it needs before writing its output element,
// so an output may share an input's memory (kInplace).

// out[i] (req) a[i] K b[i].
// The type the functors compute T in: float for 16-bit float storage (each
// value read once, rounded once when stored); T otherwise.
template <typename T>
using ElemCompute = KernelCompute<T>;

template <Binary K, typename T>
struct BinaryForwardKernel {
  const T* a;
  const T* b;
  T* out;
  OpReq req;
  // load/store: four loads in flight per GPU thread (launch.cuh).
  struct Loaded {
    T a, b;
  };
  MX_HOST_DEVICE Loaded load(int64_t i) const { return {a[i], b[i]}; }
  MX_HOST_DEVICE void store(int64_t i, const Loaded& v) const {
    using C = ElemCompute<T>;
    assign(out + i, req, T(binary_forward<K>(C(v.a), C(v.b))));
  }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

// grad[i] (req) the gradient of input `side`; a and b may be null for add/sub.
template <Binary K, typename T>
struct BinaryBackwardKernel {
  const T* g;
  const T* a;
  const T* b;
  T* grad;
  OpReq req;
  int side;
  static constexpr bool kReads = K == Binary::kMul || K == Binary::kDiv;
  struct Loaded {
    T g, a, b;
  };
  MX_HOST_DEVICE Loaded load(int64_t i) const {
    return {g[i], kReads ? a[i] : T(0), kReads ? b[i] : T(0)};
  }
  MX_HOST_DEVICE void store(int64_t i, const Loaded& v) const {
    using C = ElemCompute<T>;
    assign(grad + i, req, T(binary_grad<K>(side, C(v.g), C(v.a), C(v.b))));
  }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

template <typename T>
struct ScalarForwardKernel {
  WithScalar kind;
  T s;
  const T* x;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    using C = ElemCompute<T>;
    assign(out + i, req, T(scalar_forward(kind, C(x[i]), C(s))));
  }
};

template <typename T>
struct ScalarBackwardKernel {
  WithScalar kind;
  T s;
  const T* g;
  const T* x;
  const T* y;
  T* grad;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    using C = ElemCompute<T>;
    assign(grad + i, req, T(C(g[i]) * scalar_derivative(kind, C(x[i]), C(y[i]), C(s))));
  }
};

template <typename T>
struct UnaryForwardKernel {
  Unary kind;
  const T* x;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    using C = ElemCompute<T>;
    assign(out + i, req, T(unary_forward(kind, C(x[i]))));
  }
};

template <typename T>
struct UnaryBackwardKernel {
  Unary kind;
  const T* g;
  const T* x;
  const T* y;
  T* grad;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    using C = ElemCompute<T>;
    assign(grad + i, req, T(C(g[i]) * unary_derivative(kind, C(x[i]), C(y[i]))));
  }
};

template <typename T>
struct ClipForwardKernel {
  T lo, hi;
  const T* x;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const T v = x[i];
    assign(out + i, req, v < lo ? lo : (v > hi ? hi : v));
  }
};

// The gradient passes where lo <= x <= hi.
template <typename T>
struct ClipBackwardKernel {
  T lo, hi;
  const T* g;
  const T* x;
  T* grad;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    const T v = x[i];
    assign(grad + i, req, v >= lo && v <= hi ? g[i] : T(0));
  }
};

// out[i] (req) value: zeros_like, ones_like, BlockGrad's zero gradient.
template <typename T>
struct FillKernel {
  T value;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { assign(out + i, req, value); }
};

// grad[i] (req) g[i]: the gradient of identity-like inputs (add_n).
template <typename T>
struct CopyKernel {
  const T* x;
  T* out;
  OpReq req;
  MX_HOST_DEVICE T load(int64_t i) const { return x[i]; }
  MX_HOST_DEVICE void store(int64_t i, T xi) const { assign(out + i, req, xi); }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

// add_n in chunks of at most kAddNChunk inputs (a kernel argument holds a
// fixed number of pointers). The first chunk starts from zero and stores with
// the operator's req; each later chunk adds its inputs to the running sum in
// out, so with kWrite the sum is ((x0 + x1) + x2) + ..., the CPU's order.
inline constexpr int kAddNChunk = 8;

template <typename T>
struct AddNKernel {
  const T* xs[kAddNChunk];
  int count;
  bool first;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    using C = ElemCompute<T>;  // a 16-bit sum rounded once, not at every addition
    C s = first ? C(0) : C(out[i]);
    for (int k = 0; k < count; ++k) s += C(xs[k][i]);
    assign(out + i, first || req == OpReq::kNull ? req : OpReq::kWrite, T(s));
  }
};

// The chunks add_n launches, in order (one launch each, the later ones
// reading the running sum in out). The CPU reads every input of an element
// before writing it, so the output may be one of the inputs' arrays; here an
// input that is `out` itself must be read by the first chunk, before any
// launch writes out: such inputs then go first (more than kAddNChunk of them
// is an error naming `where`). Nothing for kNull.
template <typename T>
std::vector<AddNKernel<T>> add_n_chunks(const std::vector<const T*>& xs, T* out, OpReq req,
                                        const char* where) {
  std::vector<AddNKernel<T>> chunks;
  if (req == OpReq::kNull) return chunks;
  std::vector<const T*> order(xs);
  const auto late_alias = std::find(order.begin() + std::min<size_t>(order.size(), kAddNChunk),
                                    order.end(), static_cast<const T*>(out));
  if (late_alias != order.end()) {
    std::stable_partition(order.begin(), order.end(),
                          [out](const T* x) { return x == static_cast<const T*>(out); });
    if (std::count(order.begin(), order.end(), static_cast<const T*>(out)) > kAddNChunk)
      throw Error(
          str(where, ": on the GPU the output may be at most ", kAddNChunk, " of the inputs"));
  }
  for (size_t first = 0; first < order.size(); first += kAddNChunk) {
    AddNKernel<T> f{};
    f.count = static_cast<int>(std::min<size_t>(kAddNChunk, order.size() - first));
    for (int k = 0; k < f.count; ++k) f.xs[k] = order[first + static_cast<size_t>(k)];
    f.first = first == 0;
    f.out = out;
    f.req = req;
    chunks.push_back(f);
  }
  return chunks;
}

}  // namespace mx::op
