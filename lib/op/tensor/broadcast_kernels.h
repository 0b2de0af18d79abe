// Index arithmetic and per-element logic of the broadcast_* operators, shared
// by the CPU kernels (tensor/broadcast.cc, through BroadcastLayout in
// broadcast_util.h) and the GPU kernels (op/cuda/broadcast_gpu.cu).
// BroadcastIndex is a small POD that a kernel gets by value: the output's
// merged axes and, per operand, the stride of each (0 where it broadcasts).
#pragma once

#include <cstdint>

#include "base/host_device.h"
#include "base/shape.h"
#include "op/tensor_ref.h"

namespace mx::op {

template <int N>
struct BroadcastIndex {
  int ndim = 1;
  int64_t dims[Shape::kMaxNdim] = {};
  int64_t strides[N][Shape::kMaxNdim] = {};

  // off[k]: the offset in operand k of output element o.
  MX_HOST_DEVICE void offsets(int64_t o, int64_t (&off)[N]) const {
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int i = ndim - 1; i >= 0; --i) {
      const int64_t j = o % dims[i];
      o /= dims[i];
      for (int k = 0; k < N; ++k) off[k] += j * strides[k][i];
    }
  }
};

enum class BroadcastKind {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMaximum,
  kMinimum,
  // Comparisons and logical operators: 1 or 0 in the operands' type, a
  // nonzero operand (NaN too) counting as true; zero gradients, as in MXNet.
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

// The kinds whose gradients are zero (the backward never reads d_lhs/d_rhs).
constexpr bool is_logic(BroadcastKind kind) { return kind >= BroadcastKind::kEqual; }

template <typename T>
MX_HOST_DEVICE inline T broadcast_apply(BroadcastKind kind, T a, T b) {
  switch (kind) {
    case BroadcastKind::kAdd: return a + b;
    case BroadcastKind::kSub: return a - b;
    case BroadcastKind::kMul: return a * b;
    case BroadcastKind::kDiv: return a / b;
    case BroadcastKind::kMaximum: return a > b ? a : b;
    case BroadcastKind::kMinimum: return a < b ? a : b;
    case BroadcastKind::kEqual: return a == b ? T(1) : T(0);
    case BroadcastKind::kNotEqual: return a != b ? T(1) : T(0);
    case BroadcastKind::kGreater: return a > b ? T(1) : T(0);
    case BroadcastKind::kGreaterEqual: return a >= b ? T(1) : T(0);
    case BroadcastKind::kLesser: return a < b ? T(1) : T(0);
    case BroadcastKind::kLesserEqual: return a <= b ? T(1) : T(0);
    case BroadcastKind::kLogicalAnd: return a != T(0) && b != T(0) ? T(1) : T(0);
    case BroadcastKind::kLogicalOr: return a != T(0) || b != T(0) ? T(1) : T(0);
    case BroadcastKind::kLogicalXor: return (a != T(0)) != (b != T(0)) ? T(1) : T(0);
  }
  return a;
}

// d(out)/d(lhs) and d(out)/d(rhs); ties of maximum/minimum go to lhs, as in
// MXNet. The logic kinds are piecewise constant: 0.
template <typename T>
MX_HOST_DEVICE inline T broadcast_d_lhs(BroadcastKind kind, T a, T b) {
  switch (kind) {
    case BroadcastKind::kAdd:
    case BroadcastKind::kSub: return T(1);
    case BroadcastKind::kMul: return b;
    case BroadcastKind::kDiv: return T(1) / b;
    case BroadcastKind::kMaximum: return a >= b ? T(1) : T(0);
    case BroadcastKind::kMinimum: return a <= b ? T(1) : T(0);
    default: return T(0);  // the logic kinds
  }
}
template <typename T>
MX_HOST_DEVICE inline T broadcast_d_rhs(BroadcastKind kind, T a, T b) {
  switch (kind) {
    case BroadcastKind::kAdd: return T(1);
    case BroadcastKind::kSub: return T(-1);
    case BroadcastKind::kMul: return a;
    case BroadcastKind::kDiv: return -a / (b * b);
    case BroadcastKind::kMaximum: return a < b ? T(1) : T(0);
    case BroadcastKind::kMinimum: return a > b ? T(1) : T(0);
    default: return T(0);  // the logic kinds
  }
}

// out[o] (req) a[...] kind b[...], operands 0 and 1 of `index` being a and b.
template <typename T>
struct BroadcastForwardKernel {
  BroadcastIndex<2> index;
  BroadcastKind kind;
  const T* a;
  const T* b;
  T* out;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    int64_t off[2];
    index.offsets(o, off);
    assign(out + o, req, broadcast_apply(kind, a[off[0]], b[off[1]]));
  }
};

// dst[o] (req) g[o] * d(out)/d(input `side`) at output element o, before the
// sum over the broadcast axes (index as in BroadcastForwardKernel).
template <typename T>
struct BroadcastGradKernel {
  BroadcastIndex<2> index;
  BroadcastKind kind;
  int side;
  const T* g;
  const T* a;
  const T* b;
  T* dst;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t o) const {
    int64_t off[2];
    index.offsets(o, off);
    const T x = a[off[0]], z = b[off[1]];
    assign(dst + o, req,
           g[o] * (side == 0 ? broadcast_d_lhs(kind, x, z) : broadcast_d_rhs(kind, x, z)));
  }
};

}  // namespace mx::op
