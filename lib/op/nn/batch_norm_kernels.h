// BatchNorm's GPU kernels as functions of (channel, split, thread): the GPU
// reduces each channel's elements in `splits` parts, one block each
// (BatchNormView::for_split_thread), so that a layer with few channels
// still fills the GPU; a per-channel step combines the parts in a fixed
// order (deterministic) and the output is then written element by element
// (batch_norm_gpu.cu). tests/op/test_nn_kernels_host.cc runs the same
// functions over every (channel, split, thread) on the CPU against the CPU
// operator. The arithmetic follows the CPU kernel's (sums in float64, the
// biased variance in the moving variance, MXNet's guard for constant data
// with eps 0) but reads the data once for both statistics: the sums of
// (x - shift) and (x - shift)^2, shift being the channel's first element, so
// that the variance taken from them does not cancel the way raw sums of
// squares do when the mean is large against the spread.
#pragma once

#include <cstdint>

#include "op/compute_type.h"
#include "op/nn/nn_math.h"
#include "op/tensor_ref.h"

namespace mx::op {

// The data seen as (outer, channels, inner) around the channel axis.
struct BatchNormView {
  int64_t outer = 1, channels = 1, inner = 1;
  MX_HOST_DEVICE int64_t count() const { return outer * inner; }
  // The element index of the e-th element (e < count()) of channel ch.
  // Divisions in 32 bits where the values fit: a 64-bit division is a long
  // instruction sequence on a GPU, and these run once per element.
  MX_HOST_DEVICE int64_t index(int64_t ch, int64_t e) const {
    if (fits32(e) && fits32(inner)) {
      const auto e32 = static_cast<uint32_t>(e), inner32 = static_cast<uint32_t>(inner);
      return ((e32 / inner32) * channels + ch) * inner + e32 % inner32;
    }
    return ((e / inner) * channels + ch) * inner + e % inner;
  }
  // The channel of element i.
  MX_HOST_DEVICE int64_t channel_of(int64_t i) const {
    if (fits32(i) && fits32(inner) && fits32(channels))
      return (static_cast<uint32_t>(i) / static_cast<uint32_t>(inner)) %
             static_cast<uint32_t>(channels);
    return (i / inner) % channels;
  }
  MX_HOST_DEVICE static bool fits32(int64_t v) { return v >= 0 && v <= 0xffffffffLL; }
  // fn(i) for the elements i of channel ch that thread `thread` of
  // `threads` covers in split `split` of `splits`. With rows of at least
  // `threads` elements the splits take every splits-th row and the threads
  // stride along each row (neighbours read neighbours, no division); shorter
  // rows are covered as one list of count() elements.
  template <typename Fn>
  MX_HOST_DEVICE void for_split_thread(int64_t ch, int64_t split, int64_t splits, int64_t thread,
                                       int64_t threads, Fn fn) const {
    // Four calls a round, in the same order as one at a time: a GPU thread
    // then has four loads in flight instead of one (fn only reads memory),
    // which is what lets these reductions approach the memory's bandwidth.
    if (inner >= threads) {
      for (int64_t o = split; o < outer; o += splits) {
        const int64_t base = (o * channels + ch) * inner;
        int64_t i = thread;
        for (; i + 3 * threads < inner; i += 4 * threads) {
          fn(base + i);
          fn(base + i + threads);
          fn(base + i + 2 * threads);
          fn(base + i + 3 * threads);
        }
        for (; i < inner; i += threads) fn(base + i);
      }
    } else {
      const int64_t step = splits * threads;
      int64_t e = split * threads + thread;
      for (; e + 3 * step < count(); e += 4 * step) {
        fn(index(ch, e));
        fn(index(ch, e + step));
        fn(index(ch, e + 2 * step));
        fn(index(ch, e + 3 * step));
      }
      for (; e < count(); e += step) fn(index(ch, e));
    }
  }
};

// The statistics a channel is normalized with.
struct BatchNormStats {
  double mean = 0, invstd = 0;
};

// T: the data's type; P: the parameters' and statistics' (float32 for
// 16-bit float data, as MXNet's BatchNorm keeps them in mixed precision).
template <typename T, typename P = T>
struct BatchNormForwardChannel {
  using Data = T;
  using C = KernelCompute<T>;  // the per-element arithmetic (float for 16-bit data)
  BatchNormView view;
  const T* x;
  const P* gamma;
  const P* beta;
  P* moving_mean;
  P* moving_var;
  T* y;
  P* mean_out;
  P* invstd_out;
  OpReq req_y, req_mean, req_invstd;
  double eps, momentum;
  bool fix_gamma;
  bool batch_stats;  // training without use_global_stats

  // The value a channel's sums are shifted by: its first element, near
  // enough to the mean for the variance not to cancel.
  MX_HOST_DEVICE double shift_of(int64_t ch) const {
    return view.count() > 0 ? static_cast<double>(C(x[view.index(ch, 0)])) : 0.0;
  }
  // Phase 1 (batch_stats): a thread's part of one split of the channel's
  // sums of (x - shift) and (x - shift)^2.
  MX_HOST_DEVICE void partial_sums(int64_t ch, double shift, int64_t split, int64_t splits,
                                   int64_t thread, int64_t threads, double& s1, double& s2) const {
    s1 = 0;
    s2 = 0;
    view.for_split_thread(ch, split, splits, thread, threads, [&](int64_t i) {
      const double d = static_cast<double>(C(x[i])) - shift;
      s1 += d;
      s2 += d * d;
    });
  }
  // The mean and the sum of squared deviations from the channel's shifted sums.
  MX_HOST_DEVICE void mean_and_sq(double shift, double s1, double s2, double& mean,
                                  double& sq) const {
    const double n = static_cast<double>(view.count());
    mean = view.count() > 0 ? shift + s1 / n : 0.0;
    sq = view.count() > 0 ? s2 - s1 * (s1 / n) : 0.0;
    if (sq < 0) sq = 0;  // rounding; the variance is never negative
  }
  // The statistics (the batch's from the sums, else the moving ones).
  MX_HOST_DEVICE BatchNormStats stats(int64_t ch, double mean, double sq) const {
    if (!batch_stats)
      return {static_cast<double>(moving_mean[ch]),
              1.0 / nnmath::sqrt(static_cast<double>(moving_var[ch]) + eps)};
    const double var = view.count() > 0 ? sq / static_cast<double>(view.count()) : 0.0;
    // MXNet's guard: no division by zero for constant data and eps 0.
    return {mean, (sq == 0 && eps == 0) ? 0.0 : 1.0 / nnmath::sqrt(var + eps)};
  }
  // Once per channel, after stats() read the moving statistics: the moving
  // statistics move, the saved ones are written.
  MX_HOST_DEVICE void finish(int64_t ch, const BatchNormStats& s, double sq) const {
    if (batch_stats) {
      const double var = view.count() > 0 ? sq / static_cast<double>(view.count()) : 0.0;
      moving_mean[ch] = static_cast<P>(moving_mean[ch] * momentum + s.mean * (1 - momentum));
      moving_var[ch] = static_cast<P>(moving_var[ch] * momentum + var * (1 - momentum));
    }
    if (req_mean != OpReq::kNull) mean_out[ch] = static_cast<P>(s.mean);
    if (req_invstd != OpReq::kNull) invstd_out[ch] = static_cast<P>(s.invstd);
  }
  // The channel's output is x * scale + shift.
  MX_HOST_DEVICE void scale_shift(int64_t ch, const BatchNormStats& s, C& scale, C& shift) const {
    scale = static_cast<C>(s.invstd * (fix_gamma ? 1.0 : static_cast<double>(gamma[ch])));
    shift = static_cast<C>(static_cast<double>(beta[ch]) - s.mean * static_cast<double>(scale));
  }
  // Phase 3, one element (where req_y is not kNull), its data value `xi` read.
  MX_HOST_DEVICE void apply(int64_t i, T xi, C scale, C shift) const {
    assign(y + i, req_y, static_cast<T>(C(xi) * scale + shift));
  }
};

// What the data gradient of one channel needs, computed once per channel.
struct BatchNormDataGrad {
  double mean = 0, k = 0, mean_dy = 0, iw = 0;
  bool through_stats = false;  // the batch statistics depend on the data
};

template <typename T, typename P = T>
struct BatchNormBackwardChannel {
  using Data = T;
  using C = KernelCompute<T>;
  BatchNormView view;
  const T* x;
  const P* gamma;
  const T* dy;
  const P* saved_mean;
  const P* saved_invstd;
  const P* moving_mean;
  const P* moving_var;
  T* dx;  // null where the gradient is not requested
  P* dgamma;
  P* dbeta;
  OpReq req_dx, req_dgamma, req_dbeta;
  double eps;
  bool fix_gamma;
  bool batch_stats;

  MX_HOST_DEVICE BatchNormStats stats(int64_t ch) const {
    if (batch_stats)
      return {static_cast<double>(saved_mean[ch]), static_cast<double>(saved_invstd[ch])};
    return {static_cast<double>(moving_mean[ch]),
            1.0 / nnmath::sqrt(static_cast<double>(moving_var[ch]) + eps)};
  }
  // A thread's part of one split of sum(dy) and sum((x - mean) * dy).
  MX_HOST_DEVICE void partial(int64_t ch, double mean, int64_t split, int64_t splits,
                              int64_t thread, int64_t threads, double& sum_dy, double& dot) const {
    sum_dy = 0;
    dot = 0;
    view.for_split_thread(ch, split, splits, thread, threads, [&](int64_t i) {
      const double dyi = static_cast<double>(C(dy[i]));
      sum_dy += dyi;
      dot += (static_cast<double>(C(x[i])) - mean) * dyi;
    });
  }
  // Once per channel, from the channel's sums.
  MX_HOST_DEVICE BatchNormDataGrad data_grad(int64_t ch, const BatchNormStats& s, double sum_dy,
                                             double dot) const {
    const double w = fix_gamma ? 1.0 : static_cast<double>(gamma[ch]);
    const int64_t count = view.count();
    BatchNormDataGrad g;
    g.mean = s.mean;
    g.iw = s.invstd * w;
    if (batch_stats && count > 0) {
      // Through the batch statistics: remove the components of dy along the
      // mean and along the normalized data.
      const double n = static_cast<double>(count);
      g.k = dot * s.invstd * s.invstd / n;
      g.mean_dy = sum_dy / n;
      g.through_stats = true;
    }
    return g;
  }
  // One element of the data gradient (where req_dx is not kNull), its
  // values of x and dy read.
  MX_HOST_DEVICE void apply(int64_t i, T xi, T dyi, const BatchNormDataGrad& g) const {
    if (g.through_stats)
      assign(dx + i, req_dx, static_cast<T>((C(dyi) - g.mean_dy - (C(xi) - g.mean) * g.k) * g.iw));
    else
      assign(dx + i, req_dx, static_cast<T>(C(dyi) * static_cast<C>(g.iw)));
  }
  // Once per channel: the parameter gradients.
  MX_HOST_DEVICE void finish(int64_t ch, const BatchNormStats& s, double sum_dy, double dot) const {
    assign(dgamma + ch, req_dgamma, static_cast<P>(fix_gamma ? 0.0 : dot * s.invstd));
    assign(dbeta + ch, req_dbeta, static_cast<P>(sum_dy));
  }
};

}  // namespace mx::op
