// The per-element steps of the RNN operator, shared by the CPU kernels and
// the CUDA kernels (rnn_driver.h runs them on either): every functor has an
// MX_HOST_DEVICE operator()(row, column) over a (rows, columns) grid, with no
// state of its own. tests/op/test_rnn_kernels_host.cc runs them on the CPU.
//
// One step of one direction of one layer, for the N sequences of a batch:
// the x-side products (Wx x_t, all steps at once) and the h-side products
// (Wh s_prev, each step) come from GEMMs; these functors add the biases,
// apply the gates and write the step's values. A sequence whose length is
// reached (t >= length[n]) is inactive: its state and cell carry over
// unchanged, its output is 0, and its gradients pass through.
//
// T is the stored element type; the functors compute in KernelCompute<T>
// (float for the 16-bit types of mixed precision: each value read is
// widened, and rounded once when stored).
#pragma once

#include <cstdint>
#include <type_traits>

#include "op/compute_type.h"
#include "op/nn/nn_math.h"
#include "op/nn/rnn_param.h"

namespace mx::op::rnn {

template <typename T>
MX_HOST_DEVICE inline T sigmoid(T x) {
  return T(1) / (T(1) + nnmath::exp(-x));
}

// Whether sequence n is still running at step t (no lengths: always).
MX_HOST_DEVICE inline bool active(const int32_t* lengths, int64_t n, int64_t t) {
  return lengths == nullptr || t < lengths[n];
}

// The cell state clip of an LSTM (lstm_state_clip_min/max).
template <typename T>
struct CellClip {
  // float for every type but double (the same bytes for a host 16-bit type
  // and its device twin, whatever their compute types).
  using Bound = std::conditional_t<std::is_same_v<T, double>, double, float>;
  bool on = false;
  bool nan_to_min = false;  // lstm_state_clip_nan
  Bound lo = 0, hi = 0;

  template <typename C>
  MX_HOST_DEVICE C apply(C c) const {
    if (!on) return c;
    if (nan_to_min && c != c) return C(lo);
    return c < C(lo) ? C(lo) : (c > C(hi) ? C(hi) : c);  // NaN fails both tests and stays
  }
  // The clip passes gradient only strictly inside the range.
  template <typename C>
  MX_HOST_DEVICE C pass(C c) const {
    return !on || (c > C(lo) && c < C(hi)) ? C(1) : C(0);
  }
};

// Where the step's input values are and its results go. Rows are the N
// sequences; `gates` has a row stride of gate_width (the x-side products on
// entry, the gate values on exit), `hh` of G*H (the h-side products).
template <typename T>
struct StepForward {
  RnnMode mode;
  int64_t H, gate_width, t;
  const int32_t* lengths;
  const T* bx;
  const T* bh;
  T* gates;
  const T* hh;
  const T* c_prev;  // LSTM
  T* c;             // LSTM
  T* h;             // (N, H): the new state (or, with a projection, its input)
  CellClip<T> clip;

  MX_HOST_DEVICE void operator()(int64_t n, int64_t j) const {
    using C = KernelCompute<T>;
    T* g = gates + n * gate_width;
    const T* r = hh + n * gate_width_h();
    // Gate q's pre-activation: x-side and h-side products and both biases.
    auto pre = [&](int64_t q) {
      const int64_t e = q * H + j;
      return widen(g[e]) + widen(bx[e]) + widen(r[e]) + widen(bh[e]);
    };
    if (mode == RnnMode::kLstm) {
      const C i = sigmoid(pre(0));
      const C f = sigmoid(pre(1));
      const C u = nnmath::tanh(pre(2));
      const C o = sigmoid(pre(3));
      const int64_t k = n * H + j;
      if (!active(lengths, n, t)) {
        c[k] = c_prev[k];
        h[k] = T(0);  // with a projection, its weight gradient reads this row (times 0)
        return;
      }
      const C cell = clip.apply(f * widen(c_prev[k]) + i * u);
      g[j] = T(i);
      g[H + j] = T(f);
      g[2 * H + j] = T(u);
      g[3 * H + j] = T(o);
      c[k] = T(cell);
      h[k] = T(o * nnmath::tanh(cell));
    } else if (mode == RnnMode::kGru) {
      const C rs = sigmoid(pre(0));
      const C z = sigmoid(pre(1));
      const C hn = widen(r[2 * H + j]) + widen(bh[2 * H + j]);
      const C cand = nnmath::tanh(widen(g[2 * H + j]) + widen(bx[2 * H + j]) + rs * hn);
      const int64_t k = n * H + j;
      g[j] = T(rs);
      g[H + j] = T(z);
      g[2 * H + j] = T(cand);
      g[3 * H + j] = T(hn);
      // h_prev is the state the caller passes as c_prev (GRU has no cell).
      h[k] = T((C(1) - z) * cand + z * widen(c_prev[k]));
    } else {
      const C x = pre(0);
      const C y = mode == RnnMode::kRnnRelu ? (x > C(0) ? x : C(0)) : nnmath::tanh(x);
      g[j] = T(y);
      h[n * H + j] = T(y);
    }
  }
  MX_HOST_DEVICE int64_t gate_width_h() const {
    return mode == RnnMode::kLstm ? 4 * H : (mode == RnnMode::kGru ? 3 * H : H);
  }
};

// After a step (and its projection): inactive sequences keep their previous
// state; the layer's output row (stride out_stride) is the state or 0.
template <typename T>
struct StepEmit {
  int64_t P, t, out_stride;
  const int32_t* lengths;
  const T* s_prev;
  T* s;
  T* out;

  MX_HOST_DEVICE void operator()(int64_t n, int64_t j) const {
    const int64_t k = n * P + j;
    if (active(lengths, n, t)) {
      out[n * out_stride + j] = s[k];
    } else {
      s[k] = s_prev[k];
      out[n * out_stride + j] = T(0);
    }
  }
};

// Backward, before the cell: an active sequence's output gradient joins the
// gradient of its state (an inactive one's output was the constant 0).
template <typename T>
struct StepAbsorb {
  int64_t P, t, out_stride;
  const int32_t* lengths;
  const T* dout;
  T* ds;
  T* ds_saved;  // projection: ds kept for the projection's weight gradient (0 when inactive)

  MX_HOST_DEVICE void operator()(int64_t n, int64_t j) const {
    const int64_t k = n * P + j;
    const bool on = active(lengths, n, t);
    if (on) ds[k] = T(widen(ds[k]) + widen(dout[n * out_stride + j]));
    if (ds_saved != nullptr) ds_saved[k] = on ? ds[k] : T(0);
  }
};

// Backward through the cell of one step: from dh (the gradient of the new
// state, or of the projection's input) and dc (the cell's, carried from the
// step after), the gradients of the gate pre-activations, x-side (dgx) and
// h-side (dgh: differs from dgx in GRU's candidate, whose h-side product is
// scaled by r), and dc for the step before (in place). Inactive sequences
// get zero gate gradients and keep dc.
template <typename T>
struct StepBackward {
  RnnMode mode;
  int64_t H, gate_width, t;
  const int32_t* lengths;
  const T* gates;
  const T* c;       // LSTM: this step's cell
  const T* c_prev;  // LSTM: the step before's cell; GRU: the previous state
  const T* dh;
  T* dc;  // LSTM
  T* dgx;
  T* dgh;  // GRU only (others: the same as dgx)
  CellClip<T> clip;

  MX_HOST_DEVICE void operator()(int64_t n, int64_t j) const {
    using C = KernelCompute<T>;
    const int64_t G = mode == RnnMode::kLstm ? 4 : (mode == RnnMode::kGru ? 3 : 1);
    const T* g = gates + n * gate_width;
    T* gx = dgx + n * G * H;
    const int64_t k = n * H + j;
    if (!active(lengths, n, t)) {
      for (int64_t q = 0; q < G; ++q) gx[q * H + j] = T(0);
      if (mode == RnnMode::kGru)
        for (int64_t q = 0; q < G; ++q) dgh[n * G * H + q * H + j] = T(0);
      return;
    }
    if (mode == RnnMode::kLstm) {
      const C i = widen(g[j]), f = widen(g[H + j]), u = widen(g[2 * H + j]),
              o = widen(g[3 * H + j]);
      const C cell = widen(c[k]);
      const C tc = nnmath::tanh(cell);
      const C d_out = widen(dh[k]);
      const C dcell = (widen(dc[k]) + d_out * o * (C(1) - tc * tc)) * clip.pass(cell);
      gx[j] = T(dcell * u * i * (C(1) - i));
      gx[H + j] = T(dcell * widen(c_prev[k]) * f * (C(1) - f));
      gx[2 * H + j] = T(dcell * i * (C(1) - u * u));
      gx[3 * H + j] = T(d_out * tc * o * (C(1) - o));
      dc[k] = T(dcell * f);
    } else if (mode == RnnMode::kGru) {
      const C r = widen(g[j]), z = widen(g[H + j]), cand = widen(g[2 * H + j]),
              hn = widen(g[3 * H + j]);
      const C d = widen(dh[k]);
      const C dcand = d * (C(1) - z) * (C(1) - cand * cand);
      const C dz = d * (widen(c_prev[k]) - cand) * z * (C(1) - z);
      const C dr = dcand * hn * r * (C(1) - r);
      gx[j] = T(dr);
      gx[H + j] = T(dz);
      gx[2 * H + j] = T(dcand);
      T* gh = dgh + n * G * H;
      gh[j] = T(dr);
      gh[H + j] = T(dz);
      gh[2 * H + j] = T(dcand * r);
    } else {
      const C y = widen(g[j]);
      const C slope = mode == RnnMode::kRnnRelu ? (y > C(0) ? C(1) : C(0)) : C(1) - y * y;
      gx[j] = T(widen(dh[k]) * slope);
    }
  }
};

// Backward: the gradient of the previous state before the h-side GEMM adds
// dgh Wh to it: an inactive sequence's passes through; GRU's new state
// holds z * h_prev directly.
template <typename T>
struct StepCarry {
  RnnMode mode;
  int64_t P, gate_width, t;
  const int32_t* lengths;
  const T* gates;
  const T* ds;
  T* ds_prev;

  MX_HOST_DEVICE void operator()(int64_t n, int64_t j) const {
    const int64_t k = n * P + j;
    if (!active(lengths, n, t))
      ds_prev[k] = ds[k];
    else
      ds_prev[k] =
          mode == RnnMode::kGru ? T(widen(ds[k]) * widen(gates[n * gate_width + P + j])) : T(0);
  }
};

// y = x * mask, with a mask of 0 or 1 / (1 - p) (dropout between layers).
template <typename T>
struct ApplyMask {
  int64_t cols;
  const T* x;
  const T* mask;
  T* y;
  MX_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    const int64_t k = r * cols + c;
    y[k] = T(widen(x[k]) * widen(mask[k]));
  }
};

// dst (row stride ld_dst, req) src (row stride ld_src).
template <typename T>
struct CopyRows {
  const T* src;
  int64_t ld_src;
  T* dst;
  int64_t ld_dst;
  bool add;
  MX_HOST_DEVICE void operator()(int64_t r, int64_t c) const {
    const T v = src[r * ld_src + c];
    if (add)
      dst[r * ld_dst + c] = T(widen(dst[r * ld_dst + c]) + widen(v));
    else
      dst[r * ld_dst + c] = v;
  }
};

template <typename T>
struct Fill {
  T* p;
  int64_t cols;
  T value;
  MX_HOST_DEVICE void operator()(int64_t r, int64_t c) const { p[r * cols + c] = value; }
};

// Sequence lengths of any element type as int32, each checked against T.
template <typename L>
struct ToLengths {
  const L* in;
  int32_t* out;
  int64_t steps;
  MX_HOST_DEVICE void operator()(int64_t, int64_t n) const {
    const double v = static_cast<double>(in[n]);
    out[n] = static_cast<int32_t>(v < 0 ? 0 : (v > static_cast<double>(steps) ? steps : v));
  }
};

}  // namespace mx::op::rnn
