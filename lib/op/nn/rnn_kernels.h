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
#pragma once

#include <cstdint>

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
  bool on = false;
  bool nan_to_min = false;  // lstm_state_clip_nan
  T lo = T(0), hi = T(0);

  MX_HOST_DEVICE T apply(T c) const {
    if (!on) return c;
    if (nan_to_min && c != c) return lo;
    return c < lo ? lo : (c > hi ? hi : c);  // NaN fails both tests and stays
  }
  // The clip passes gradient only strictly inside the range.
  MX_HOST_DEVICE T pass(T c) const { return !on || (c > lo && c < hi) ? T(1) : T(0); }
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
    T* g = gates + n * gate_width;
    const T* r = hh + n * gate_width_h();
    if (mode == RnnMode::kLstm) {
      const T i = sigmoid(g[j] + bx[j] + r[j] + bh[j]);
      const T f = sigmoid(g[H + j] + bx[H + j] + r[H + j] + bh[H + j]);
      const T u = nnmath::tanh(g[2 * H + j] + bx[2 * H + j] + r[2 * H + j] + bh[2 * H + j]);
      const T o = sigmoid(g[3 * H + j] + bx[3 * H + j] + r[3 * H + j] + bh[3 * H + j]);
      const int64_t k = n * H + j;
      if (!active(lengths, n, t)) {
        c[k] = c_prev[k];
        h[k] = T(0);  // with a projection, its weight gradient reads this row (times 0)
        return;
      }
      const T cell = clip.apply(f * c_prev[k] + i * u);
      g[j] = i;
      g[H + j] = f;
      g[2 * H + j] = u;
      g[3 * H + j] = o;
      c[k] = cell;
      h[k] = o * nnmath::tanh(cell);
    } else if (mode == RnnMode::kGru) {
      const T rs = sigmoid(g[j] + bx[j] + r[j] + bh[j]);
      const T z = sigmoid(g[H + j] + bx[H + j] + r[H + j] + bh[H + j]);
      const T hn = r[2 * H + j] + bh[2 * H + j];
      const T cand = nnmath::tanh(g[2 * H + j] + bx[2 * H + j] + rs * hn);
      const int64_t k = n * H + j;
      g[j] = rs;
      g[H + j] = z;
      g[2 * H + j] = cand;
      g[3 * H + j] = hn;
      // h_prev is the state the caller passes as c_prev (GRU has no cell).
      h[k] = (T(1) - z) * cand + z * c_prev[k];
    } else {
      const T pre = g[j] + bx[j] + r[j] + bh[j];
      const T y = mode == RnnMode::kRnnRelu ? (pre > T(0) ? pre : T(0)) : nnmath::tanh(pre);
      g[j] = y;
      h[n * H + j] = y;
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
    if (on) ds[k] += dout[n * out_stride + j];
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
      const T i = g[j], f = g[H + j], u = g[2 * H + j], o = g[3 * H + j];
      const T tc = nnmath::tanh(c[k]);
      const T d_out = dh[k];
      const T dcell = (dc[k] + d_out * o * (T(1) - tc * tc)) * clip.pass(c[k]);
      gx[j] = dcell * u * i * (T(1) - i);
      gx[H + j] = dcell * c_prev[k] * f * (T(1) - f);
      gx[2 * H + j] = dcell * i * (T(1) - u * u);
      gx[3 * H + j] = d_out * tc * o * (T(1) - o);
      dc[k] = dcell * f;
    } else if (mode == RnnMode::kGru) {
      const T r = g[j], z = g[H + j], cand = g[2 * H + j], hn = g[3 * H + j];
      const T d = dh[k];
      const T dcand = d * (T(1) - z) * (T(1) - cand * cand);
      const T dz = d * (c_prev[k] - cand) * z * (T(1) - z);
      const T dr = dcand * hn * r * (T(1) - r);
      gx[j] = dr;
      gx[H + j] = dz;
      gx[2 * H + j] = dcand;
      T* gh = dgh + n * G * H;
      gh[j] = dr;
      gh[H + j] = dz;
      gh[2 * H + j] = dcand * r;
    } else {
      const T y = g[j];
      const T slope = mode == RnnMode::kRnnRelu ? (y > T(0) ? T(1) : T(0)) : T(1) - y * y;
      gx[j] = dh[k] * slope;
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
      ds_prev[k] = mode == RnnMode::kGru ? ds[k] * gates[n * gate_width + P + j] : T(0);
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
    y[k] = x[k] * mask[k];
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
      dst[r * ld_dst + c] += v;
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
