// The RNN operator's algorithm, once for every device: the GEMMs and the
// order of the steps, with the per-element work in rnn_kernels.h. `Ops` is
// the device: the CPU kernels (rnn.cc) and the CUDA kernels
// (cuda/rnn_gpu.cu) each provide
//   void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
//             const T* a, int64_t lda, const T* b, int64_t ldb, bool add, T* c, int64_t ldc);
//   (C = op(a) op(b), or C += op(a) op(b) with add; T is the stored type, which
//   may be a 16-bit float: products then sum in float32)
//   template <typename F> void grid(int64_t rows, int64_t cols, const F& f);  // f(r, c) for all
//   void draw_mask(T* mask, int64_t n, double keep);  // 0 or 1 / keep
//
// Forward, per layer and direction: one GEMM gives the x-side products of
// every step; then per step one GEMM for the h-side products, the cell
// (StepForward), the projection's GEMM (LSTMP) and StepEmit. The forward
// values the backward pass needs stay in the workspace (RnnGeometry).
// Backward, per layer from the top and direction: per step (in reverse
// order) StepAbsorb, the projection's GEMM, StepBackward and one GEMM for
// the previous state's gradient; then every weight gradient of the
// direction is one GEMM over all steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "op/nn/rnn_kernels.h"
#include "op/nn/rnn_param.h"

namespace mx::op::rnn {

// The arrays of one call (device pointers); null where absent.
template <typename T>
struct Arrays {
  const T* data;           // (T, N, I)
  const T* params;         // flat
  const T* hx;             // (L*D, N, P)
  const T* cx;             // (L*D, N, H), LSTM
  const int32_t* lengths;  // (N), with use_sequence_length
  T* workspace;            // RnnGeometry::workspace_size()
};

template <typename T>
struct ForwardOutputs {
  T* out;  // (T, N, D*P)
  bool out_add;
  T* hy;  // (L*D, N, P)
  bool hy_add;
  T* cy;  // (L*D, N, H)
  bool cy_add;
};

template <typename T>
struct BackwardGrads {
  const T* dout;  // (T, N, D*P)
  const T* dhy;   // null: 0
  const T* dcy;
  T* ddata;  // null: not wanted
  bool ddata_add;
  T* dparams;  // null: not wanted; accumulated into (the caller zeroes it for write)
  T* dhx;
  bool dhx_add;
  T* dcx;
  bool dcx_add;
};

template <typename T, typename Ops>
class Driver {
 public:
  Driver(const RnnParam& p, const RnnGeometry& g, Ops& ops, bool training)
      : p_(p), g_(g), ops_(ops), training_(training) {
    clip_.on = p.clips();
    if (clip_.on) {
      using Bound = typename CellClip<T>::Bound;
      clip_.lo = static_cast<Bound>(*p.lstm_state_clip_min);
      clip_.hi = static_cast<Bound>(*p.lstm_state_clip_max);
      clip_.nan_to_min = p.lstm_state_clip_nan;
    }
  }

  // Scratch elements forward() and backward() need from the caller.
  int64_t forward_scratch() const { return g_.N * g_.G * g_.H; }
  int64_t backward_scratch() const {
    const int64_t TN = g_.T * g_.N, GH = g_.G * g_.H;
    return 2 * g_.N * g_.P + g_.N * g_.H * 2 + TN * GH * (p_.mode == RnnMode::kGru ? 2 : 1) +
           TN * g_.P + 2 * TN * g_.D * g_.P + TN;
  }

  void forward(const Arrays<T>& a, const ForwardOutputs<T>& o, T* scratch) {
    const RnnGeometry& g = g_;
    const T* input = a.data;
    for (int64_t l = 0; l < g.L; ++l) {
      for (int64_t d = 0; d < g.D; ++d) forward_direction(a, l, d, input, scratch);
      T* out = a.workspace + g.output_at(l);
      input = out;
      if (l + 1 < g.L && g.dropout && training_) {
        T* mask = a.workspace + g.mask_at(l);
        T* dropped = a.workspace + g.dropped_at(l);
        ops_.draw_mask(mask, g.T * g.N * g.D * g.P, 1.0 - static_cast<double>(p_.p));
        ops_.grid(g.T * g.N, g.D * g.P, ApplyMask<T>{g.D * g.P, out, mask, dropped});
        input = dropped;
      }
    }
    const int64_t DP = g.D * g.P;
    ops_.grid(g.T * g.N, DP,
              CopyRows<T>{a.workspace + g.output_at(g.L - 1), DP, o.out, DP, o.out_add});
    if (o.hy == nullptr) return;
    for (int64_t l = 0; l < g.L; ++l)
      for (int64_t d = 0; d < g.D; ++d) {
        const int64_t last = d == 0 ? g.T - 1 : 0;  // the direction's final step
        const int64_t s = l * g.D + d;
        ops_.grid(g.N, g.P,
                  CopyRows<T>{a.workspace + g.states_at(l, d) + last * g.N * g.P, g.P,
                              o.hy + s * g.N * g.P, g.P, o.hy_add});
        if (o.cy != nullptr)
          ops_.grid(g.N, g.H,
                    CopyRows<T>{a.workspace + g.cells_at(l, d) + last * g.N * g.H, g.H,
                                o.cy + s * g.N * g.H, g.H, o.cy_add});
      }
  }

  void backward(const Arrays<T>& a, const BackwardGrads<T>& b, T* scratch) {
    const RnnGeometry& g = g_;
    const int64_t TN = g.T * g.N, GH = g.G * g.H, DP = g.D * g.P;
    Scratch s;
    T* next = scratch;
    auto take = [&](int64_t n) {
      T* at = next;
      next += n;
      return at;
    };
    s.ds = take(g.N * g.P);
    s.ds_prev = take(g.N * g.P);
    s.dc = take(g.N * g.H);
    s.dhpre = take(g.N * g.H);
    s.dgx = take(TN * GH);
    s.dgh = p_.mode == RnnMode::kGru ? take(TN * GH) : s.dgx;
    s.dr = take(TN * g.P);
    T* dy_buffers[2] = {take(TN * DP), take(TN * DP)};
    s.ones = take(TN);
    ops_.grid(1, TN, Fill<T>{s.ones, TN, T(1)});

    const T* dy = b.dout;  // the gradient of layer l's output
    for (int64_t l = g.L - 1; l >= 0; --l) {
      // Where the gradient of this layer's input goes: the data's, or a
      // buffer that becomes the layer below's output gradient.
      const bool bottom = l == 0;
      T* dx = bottom ? b.ddata : dy_buffers[l % 2];
      const bool dx_add = bottom && b.ddata_add;
      for (int64_t d = 0; d < g.D; ++d) backward_direction(a, b, l, d, dy, dx, dx_add || d > 0, s);
      if (bottom) break;
      if (g.dropout && training_)  // the layer below's output went through a mask
        ops_.grid(TN, DP, ApplyMask<T>{DP, dx, a.workspace + g.mask_at(l - 1), dx});
      dy = dx;
    }
  }

 private:
  struct Scratch {
    T *ds, *ds_prev, *dc, *dhpre, *dgx, *dgh, *dr, *ones;
  };

  // The layer's input: the data, or the (masked, in training) output below.
  const T* layer_input(const Arrays<T>& a, int64_t l) const {
    if (l == 0) return a.data;
    if (g_.dropout && training_) return a.workspace + g_.dropped_at(l - 1);
    return a.workspace + g_.output_at(l - 1);
  }
  // Step s of direction d is time step t.
  int64_t time_of(int64_t d, int64_t s) const { return d == 0 ? s : g_.T - 1 - s; }

  void forward_direction(const Arrays<T>& a, int64_t l, int64_t d, const T* input, T* hh) {
    const RnnGeometry& g = g_;
    const int64_t In = g.layer_input(l), GH = g.G * g.H, GW = g.gate_width(), NP = g.N * g.P;
    const T* w = a.params;
    T* gates = a.workspace + g.gates_at(l, d);
    T* cells = a.workspace + g.cells_at(l, d);
    T* hpre = a.workspace + g.unprojected_at(l, d);
    T* states = a.workspace + g.states_at(l, d);
    T* out = a.workspace + g.output_at(l) + d * g.P;
    const int64_t state = l * g.D + d;
    const T* s0 = a.hx + state * NP;
    const T* c0 = a.cx != nullptr ? a.cx + state * g.N * g.H : nullptr;
    // x-side products of every step at once.
    ops_.gemm(false, true, g.T * g.N, GH, In, input, In, w + g.wx(l, d), In, false, gates, GW);
    for (int64_t s = 0; s < g.T; ++s) {
      const int64_t t = time_of(d, s), tp = time_of(d, s - 1);
      const T* s_prev = s == 0 ? s0 : states + tp * NP;
      const T* c_prev = s == 0 ? c0 : cells + tp * g.N * g.H;
      ops_.gemm(false, true, g.N, GH, g.P, s_prev, g.P, w + g.wh(l, d), g.P, false, hh, GH);
      T* h = g.projection ? hpre + t * g.N * g.H : states + t * NP;
      StepForward<T> step{p_.mode,
                          g.H,
                          GW,
                          t,
                          a.lengths,
                          w + g.bx(l, d),
                          w + g.bh(l, d),
                          gates + t * g.N * GW,
                          hh,
                          p_.mode == RnnMode::kGru ? s_prev : c_prev,
                          cells + t * g.N * g.H,
                          h,
                          clip_};
      ops_.grid(g.N, g.H, step);
      if (g.projection)
        ops_.gemm(false, true, g.N, g.P, g.H, h, g.H, w + g.whr(l, d), g.H, false, states + t * NP,
                  g.P);
      ops_.grid(g.N, g.P,
                StepEmit<T>{g.P, t, g.D * g.P, a.lengths, s_prev, states + t * NP,
                            out + t * g.N * g.D * g.P});
    }
  }

  void backward_direction(const Arrays<T>& a, const BackwardGrads<T>& b, int64_t l, int64_t d,
                          const T* dy, T* dx, bool dx_add, const Scratch& s) {
    const RnnGeometry& g = g_;
    const int64_t In = g.layer_input(l), GH = g.G * g.H, GW = g.gate_width(), NP = g.N * g.P;
    const int64_t NH = g.N * g.H, TN = g.T * g.N, DP = g.D * g.P;
    const T* w = a.params;
    const T* gates = a.workspace + g.gates_at(l, d);
    const T* cells = a.workspace + g.cells_at(l, d);
    const T* hpre = a.workspace + g.unprojected_at(l, d);
    const T* states = a.workspace + g.states_at(l, d);
    const int64_t state = l * g.D + d;
    const T* s0 = a.hx + state * NP;
    const T* c0 = a.cx != nullptr ? a.cx + state * NH : nullptr;
    // The gradients of the final state and cell start the carried ones.
    T* ds = s.ds;
    T* ds_prev = s.ds_prev;
    start_from(b.dhy != nullptr ? b.dhy + state * NP : nullptr, ds, g.P);
    if (p_.mode == RnnMode::kLstm)
      start_from(b.dcy != nullptr ? b.dcy + state * NH : nullptr, s.dc, g.H);
    for (int64_t k = g.T - 1; k >= 0; --k) {
      const int64_t t = time_of(d, k), tp = time_of(d, k - 1);
      const T* s_prev = k == 0 ? s0 : states + tp * NP;
      const T* c_prev = k == 0 ? c0 : cells + tp * NH;
      ops_.grid(g.N, g.P,
                StepAbsorb<T>{g.P, t, DP, a.lengths, dy + t * g.N * DP + d * g.P, ds,
                              g.projection ? s.dr + t * NP : nullptr});
      const T* dh = ds;
      if (g.projection) {
        ops_.gemm(false, false, g.N, g.H, g.P, ds, g.P, w + g.whr(l, d), g.H, false, s.dhpre, g.H);
        dh = s.dhpre;
      }
      StepBackward<T> step{p_.mode,
                           g.H,
                           GW,
                           t,
                           a.lengths,
                           gates + t * g.N * GW,
                           cells + t * NH,
                           p_.mode == RnnMode::kGru ? s_prev : c_prev,
                           dh,
                           s.dc,
                           s.dgx + t * g.N * GH,
                           s.dgh + t * g.N * GH,
                           clip_};
      ops_.grid(g.N, g.H, step);
      ops_.grid(g.N, g.P,
                StepCarry<T>{p_.mode, g.P, GW, t, a.lengths, gates + t * g.N * GW, ds, ds_prev});
      ops_.gemm(false, false, g.N, g.P, GH, s.dgh + t * g.N * GH, GH, w + g.wh(l, d), g.P, true,
                ds_prev, g.P);
      std::swap(ds, ds_prev);
    }
    if (b.dhx != nullptr)
      ops_.grid(g.N, g.P, CopyRows<T>{ds, g.P, b.dhx + state * NP, g.P, b.dhx_add});
    if (b.dcx != nullptr)
      ops_.grid(g.N, g.H, CopyRows<T>{s.dc, g.H, b.dcx + state * NH, g.H, b.dcx_add});
    const T* input = layer_input(a, l);
    if (dx != nullptr)
      ops_.gemm(false, false, TN, In, GH, s.dgx, GH, w + g.wx(l, d), In, dx_add, dx, In);
    if (b.dparams == nullptr) return;
    T* dw = b.dparams;
    ops_.gemm(true, false, GH, In, TN, s.dgx, GH, input, In, true, dw + g.wx(l, d), In);
    // Each step's h-side product read the state before it: the steps but
    // the first read the states saved one step earlier, the first the initial state.
    const int64_t rest = (g.T - 1) * g.N;
    if (d == 0) {
      if (rest > 0)
        ops_.gemm(true, false, GH, g.P, rest, s.dgh + g.N * GH, GH, states, g.P, true,
                  dw + g.wh(l, d), g.P);
      ops_.gemm(true, false, GH, g.P, g.N, s.dgh, GH, s0, g.P, true, dw + g.wh(l, d), g.P);
    } else {
      if (rest > 0)
        ops_.gemm(true, false, GH, g.P, rest, s.dgh, GH, states + NP, g.P, true, dw + g.wh(l, d),
                  g.P);
      ops_.gemm(true, false, GH, g.P, g.N, s.dgh + rest * GH, GH, s0, g.P, true, dw + g.wh(l, d),
                g.P);
    }
    if (g.projection)
      ops_.gemm(true, false, g.P, g.H, TN, s.dr, g.P, hpre, g.H, true, dw + g.whr(l, d), g.H);
    ops_.gemm(true, false, GH, 1, TN, s.dgx, GH, s.ones, 1, true, dw + g.bx(l, d), 1);
    ops_.gemm(true, false, GH, 1, TN, s.dgh, GH, s.ones, 1, true, dw + g.bh(l, d), 1);
  }

  // dst (N, cols) = src, or 0 without one.
  void start_from(const T* src, T* dst, int64_t cols) {
    if (src != nullptr)
      ops_.grid(g_.N, cols, CopyRows<T>{src, cols, dst, cols, false});
    else
      ops_.grid(g_.N, cols, Fill<T>{dst, cols, T(0)});
  }

  const RnnParam& p_;
  const RnnGeometry& g_;
  Ops& ops_;
  bool training_;
  CellClip<T> clip_;
};

}  // namespace mx::op::rnn
