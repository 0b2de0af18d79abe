// MXNet's interleaved attention operators as strided batches of row-major
// matrix products. The projections are (seq, N, heads * k * d) with each
// head's k (3: query, key, value; 2: key, value; 1: query) vectors of d
// elements side by side, so head h of sequence n is batch b = n * heads + h
// and its query (or key, value) matrix starts at b * k * d + slot * d with
// rows N * heads * k * d elements apart: every operand of every batch is a
// fixed stride from the previous one. One plan per operator and direction
// serves the CPU kernels (OpenBLAS, one call per batch) and the GPU kernels
// (one cuBLAS strided-batched call per product); plain C++, tested on the
// CPU.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "base/shape.h"
#include "op/cuda/gemm_args.h"
#include "op/tensor_ref.h"

namespace mx::op {

enum class AttentionKind {
  kSelfQK,        // queries_keys_values -> (N*heads, T, T), scaled by 1/sqrt(d)
  kSelfValAtt,    // queries_keys_values, attention -> (T, N, heads*d)
  kEncDecQK,      // queries, keys_values -> (N*heads, T, S), scaled by 1/sqrt(d)
  kEncDecValAtt,  // keys_values, attention -> (T, N, heads*d)
};

// The sizes of one call: query and key sequence lengths, sequences,
// heads and the head size d.
struct AttentionDims {
  int64_t q_len = 0, kv_len = 0, batch = 0, heads = 1, head_dim = 0;
  int64_t products() const { return batch * heads; }
};

// Vectors per head in the projection input `index` of `kind`.
inline int64_t interleaved_vectors(AttentionKind kind, int index) {
  switch (kind) {
    case AttentionKind::kSelfQK:
    case AttentionKind::kSelfValAtt: return 3;
    case AttentionKind::kEncDecQK: return index == 0 ? 1 : 2;
    case AttentionKind::kEncDecValAtt: return 2;
  }
  return 1;
}

// The sizes from the input shapes (already checked by shape inference).
inline AttentionDims attention_dims(AttentionKind kind, int64_t heads, const Shape& in0,
                                    const Shape& in1) {
  AttentionDims d;
  d.heads = heads;
  d.batch = in0[1];
  d.head_dim = in0[2] / (interleaved_vectors(kind, 0) * heads);
  switch (kind) {
    case AttentionKind::kSelfQK:
    case AttentionKind::kSelfValAtt: d.q_len = d.kv_len = in0[0]; break;
    case AttentionKind::kEncDecQK:
      d.q_len = in0[0];
      d.kv_len = in1[0];
      break;
    case AttentionKind::kEncDecValAtt:
      d.q_len = in1[1];
      d.kv_len = in0[0];
      break;
  }
  return d;
}

// Which array of the call an operand is.
enum class AttentionArray { kIn0, kIn1, kOut, kOutGrad, kGrad0, kGrad1 };

// An operand: the array and the offset of batch 0's matrix in it.
struct AttentionOperand {
  AttentionArray array = AttentionArray::kIn0;
  int64_t offset = 0;
};

// C (req) alpha op(A) op(B) for every batch; `req` is the index of C's
// request (the output's in the forward pass, the input gradient's in the
// backward pass).
struct AttentionProduct {
  cuda::RowMajorGemm gemm;
  cuda::BatchStrides strides;
  AttentionOperand a, b, c;
  double alpha = 1.0;
  int req = 0;
};

// Elements of an interleaved gradient that no product writes: `width`
// elements at `offset` of each of `rows` rows of `pitch` elements (the value
// slots of a query-key gradient, say). Zero under req write, untouched
// under add.
struct AttentionZeroSlots {
  int grad = 0;
  int64_t rows = 0, pitch = 0, offset = 0, width = 0;
};

struct AttentionPlan {
  std::array<AttentionProduct, 2> products;
  int count = 0;
  bool zero = false;
  AttentionZeroSlots zero_slots;
  void add(const AttentionProduct& p) { products[static_cast<size_t>(count++)] = p; }
};

namespace attention_detail {

// Where a kind of projection lies: its array, its row stride, the distance
// between consecutive batches and the offset of batch 0.
struct Projection {
  AttentionArray array, grad;
  int64_t ld, stride, offset;
};

struct Layout {
  Projection q, k, v;
  int64_t att_stride;  // (batch, q_len, kv_len) attention maps
  int64_t out_ld;      // (q_len, N, heads*d) value-attention output
  int64_t qkv_rows;    // rows of the interleaved input that holds k and v
  int64_t kv_pitch;    // its row length
};

inline Layout layout(AttentionKind kind, const AttentionDims& d) {
  const int64_t b = d.products(), hd = d.head_dim;
  Layout l{};
  l.att_stride = d.q_len * d.kv_len;
  l.out_ld = b * hd;
  if (kind == AttentionKind::kSelfQK || kind == AttentionKind::kSelfValAtt) {
    const int64_t ld = b * 3 * hd, s = 3 * hd;
    l.q = {AttentionArray::kIn0, AttentionArray::kGrad0, ld, s, 0};
    l.k = {AttentionArray::kIn0, AttentionArray::kGrad0, ld, s, hd};
    l.v = {AttentionArray::kIn0, AttentionArray::kGrad0, ld, s, 2 * hd};
    l.kv_pitch = s;
  } else {
    // encdec_qk: queries input 0, keys_values input 1; encdec_valatt:
    // keys_values input 0.
    const AttentionArray kv =
        kind == AttentionKind::kEncDecQK ? AttentionArray::kIn1 : AttentionArray::kIn0;
    const AttentionArray kv_grad =
        kind == AttentionKind::kEncDecQK ? AttentionArray::kGrad1 : AttentionArray::kGrad0;
    l.q = {AttentionArray::kIn0, AttentionArray::kGrad0, b * hd, hd, 0};
    l.k = {kv, kv_grad, b * 2 * hd, 2 * hd, 0};
    l.v = {kv, kv_grad, b * 2 * hd, 2 * hd, hd};
    l.kv_pitch = 2 * hd;
  }
  l.qkv_rows = d.kv_len * b;
  return l;
}

inline int grad_index(AttentionArray a) { return a == AttentionArray::kGrad1 ? 1 : 0; }

}  // namespace attention_detail

// 1/sqrt(d): the query-key products' scale.
inline double attention_scale(const AttentionDims& d) {
  return d.head_dim > 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : 1.0;
}

inline AttentionPlan attention_forward_plan(AttentionKind kind, const AttentionDims& d) {
  using namespace attention_detail;
  const Layout l = layout(kind, d);
  const int64_t tq = d.q_len, tk = d.kv_len, hd = d.head_dim, b = d.products();
  AttentionPlan plan;
  if (kind == AttentionKind::kSelfQK || kind == AttentionKind::kEncDecQK) {
    // att = alpha Q K^T
    plan.add({{false, true, tq, tk, hd, l.q.ld, l.k.ld, tk},
              {b, l.q.stride, l.k.stride, l.att_stride},
              {l.q.array, l.q.offset},
              {l.k.array, l.k.offset},
              {AttentionArray::kOut, 0},
              attention_scale(d),
              0});
  } else {
    // out = att V
    plan.add({{false, false, tq, hd, tk, tk, l.v.ld, l.out_ld},
              {b, l.att_stride, l.v.stride, hd},
              {AttentionArray::kIn1, 0},
              {l.v.array, l.v.offset},
              {AttentionArray::kOut, 0},
              1.0,
              0});
  }
  return plan;
}

// The gradients' products (none for an input whose request is kNull) and
// the slots to zero.
inline AttentionPlan attention_backward_plan(AttentionKind kind, const AttentionDims& d, OpReq req0,
                                             OpReq req1) {
  using namespace attention_detail;
  const Layout l = layout(kind, d);
  const int64_t tq = d.q_len, tk = d.kv_len, hd = d.head_dim, b = d.products();
  const OpReq req[2] = {req0, req1};
  auto wanted = [&](AttentionArray grad) { return req[grad_index(grad)] != OpReq::kNull; };
  AttentionPlan plan;
  if (kind == AttentionKind::kSelfQK || kind == AttentionKind::kEncDecQK) {
    const double alpha = attention_scale(d);
    if (wanted(l.q.grad))  // dQ = alpha dAtt K
      plan.add({{false, false, tq, hd, tk, tk, l.k.ld, l.q.ld},
                {b, l.att_stride, l.k.stride, l.q.stride},
                {AttentionArray::kOutGrad, 0},
                {l.k.array, l.k.offset},
                {l.q.grad, l.q.offset},
                alpha,
                grad_index(l.q.grad)});
    if (wanted(l.k.grad))  // dK = alpha dAtt^T Q
      plan.add({{true, false, tk, hd, tq, tk, l.q.ld, l.k.ld},
                {b, l.att_stride, l.q.stride, l.k.stride},
                {AttentionArray::kOutGrad, 0},
                {l.q.array, l.q.offset},
                {l.k.grad, l.k.offset},
                alpha,
                grad_index(l.k.grad)});
    // The value slots of the gradient holding the keys.
    plan.zero_slots = {grad_index(l.k.grad), l.qkv_rows, l.kv_pitch, l.v.offset, hd};
  } else {
    if (wanted(l.v.grad))  // dV = att^T dOut
      plan.add({{true, false, tk, hd, tq, tk, l.out_ld, l.v.ld},
                {b, l.att_stride, hd, l.v.stride},
                {AttentionArray::kIn1, 0},
                {AttentionArray::kOutGrad, 0},
                {l.v.grad, l.v.offset},
                1.0,
                grad_index(l.v.grad)});
    if (req1 != OpReq::kNull)  // dAtt = dOut V^T
      plan.add({{false, true, tq, tk, hd, l.out_ld, l.v.ld, tk},
                {b, hd, l.v.stride, l.att_stride},
                {AttentionArray::kOutGrad, 0},
                {l.v.array, l.v.offset},
                {AttentionArray::kGrad1, 0},
                1.0,
                1});
    // The query and key slots (self) or key slots (encdec) before the values.
    plan.zero_slots = {grad_index(l.v.grad), l.qkv_rows, l.kv_pitch, 0, l.v.offset};
  }
  const OpReq zreq = req[plan.zero_slots.grad];
  plan.zero = zreq == OpReq::kWrite || zreq == OpReq::kInplace;
  return plan;
}

}  // namespace mx::op
