// LayerNorm's GPU kernels as functions of (row, thread, threads): one block
// per row (the elements normalized together), each thread covering every
// threads-th element of the row; the block sums the threads' partial sums
// in shared memory (layer_norm_gpu.cu) and every thread then writes its
// elements. The gamma and beta gradients are sums over rows per channel:
// one thread per (chunk of rows, channel) sums its chunk, then one thread
// per channel adds the chunks in order, so the result does not depend on
// the launch. tests/op/test_sequence_kernels_host.cc runs the same
// functions on the CPU against the CPU operator.
//
// The statistics come from one pass over the row: sums of x - x0 and of
// (x - x0)^2 in float64, x0 being the row's first element. Shifting by a
// value of the row keeps the variance exact to float64 rounding even when
// the mean is large against the spread (the cancellation of the textbook
// one-pass formula).
#pragma once

#include <cstdint>

#include "op/nn/nn_math.h"
#include "op/tensor_ref.h"

namespace mx::op {

// The data seen as (outer, channels, inner) around the normalized axis; a
// row is one (outer, inner) position, its channels elements `inner` apart.
// The mean and std outputs (the axis kept as 1) hold one value per row, at
// index row.
struct LayerNormView {
  int64_t outer = 1, channels = 1, inner = 1;
  MX_HOST_DEVICE int64_t rows() const { return outer * inner; }
  // The index of the row's first element.
  MX_HOST_DEVICE int64_t base(int64_t row) const {
    return (row / inner) * channels * inner + row % inner;
  }
};

// A row's statistics: the mean and std = sqrt(biased variance + eps).
struct LayerNormStats {
  double mean = 0, std = 1;
};

// From a row's shifted sums (n elements, shift x0): the statistics.
MX_HOST_DEVICE inline LayerNormStats layer_norm_stats(double shift, double sum, double sq,
                                                      int64_t n, double eps) {
  if (n <= 0) return {0.0, nnmath::sqrt(eps)};
  const double m = sum / static_cast<double>(n);
  double var = sq / static_cast<double>(n) - m * m;
  var = var < 0 ? 0 : var;  // rounding of a constant row
  return {shift + m, nnmath::sqrt(var + eps)};
}

template <typename T>
struct LayerNormForwardRow {
  LayerNormView view;
  const T* x;
  const T* gamma;
  const T* beta;
  T* y;
  T* mean;
  T* std;
  OpReq req_y, req_mean, req_std;
  double eps;

  MX_HOST_DEVICE double shift(int64_t row) const {
    return view.channels > 0 ? static_cast<double>(x[view.base(row)]) : 0.0;
  }
  // A thread's part of the row's shifted sums.
  MX_HOST_DEVICE void partial(int64_t row, int64_t thread, int64_t threads, double& sum,
                              double& sq) const {
    const int64_t b = view.base(row);
    const double x0 = shift(row);
    sum = 0;
    sq = 0;
    for (int64_t k = thread; k < view.channels; k += threads) {
      const double d = static_cast<double>(x[b + k * view.inner]) - x0;
      sum += d;
      sq += d * d;
    }
  }
  MX_HOST_DEVICE LayerNormStats stats(int64_t row, double sum, double sq) const {
    return layer_norm_stats(shift(row), sum, sq, view.channels, eps);
  }
  // One thread per row: the mean and std outputs.
  MX_HOST_DEVICE void finish(int64_t row, const LayerNormStats& s) const {
    // Outputs not requested may be absent arrays.
    if (req_mean != OpReq::kNull) assign(mean + row, req_mean, static_cast<T>(s.mean));
    if (req_std != OpReq::kNull) assign(std + row, req_std, static_cast<T>(s.std));
  }
  // A thread's elements of the output.
  MX_HOST_DEVICE void apply(int64_t row, const LayerNormStats& s, int64_t thread,
                            int64_t threads) const {
    if (req_y == OpReq::kNull) return;
    const int64_t b = view.base(row);
    const T m = static_cast<T>(s.mean), r = static_cast<T>(1.0 / s.std);
    for (int64_t k = thread; k < view.channels; k += threads) {
      const int64_t i = b + k * view.inner;
      assign(y + i, req_y, static_cast<T>((x[i] - m) * r * gamma[k] + beta[k]));
    }
  }
};

// The data gradient of a row, from the saved mean and std:
//   dx = (g - mean(g) - xhat * mean(g * xhat)) / std,  g = dy * gamma,
//   xhat = (x - mean) / std.
template <typename T>
struct LayerNormBackwardRow {
  LayerNormView view;
  const T* x;
  const T* gamma;
  const T* dy;
  const T* mean;
  const T* std;
  T* dx;
  OpReq req_dx;

  // A thread's part of sum(g) and sum(g * xhat).
  MX_HOST_DEVICE void partial(int64_t row, int64_t thread, int64_t threads, double& sum_g,
                              double& sum_gx) const {
    const int64_t b = view.base(row);
    const double m = static_cast<double>(mean[row]), r = 1.0 / static_cast<double>(std[row]);
    sum_g = 0;
    sum_gx = 0;
    for (int64_t k = thread; k < view.channels; k += threads) {
      const int64_t i = b + k * view.inner;
      const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[k]);
      sum_g += g;
      sum_gx += g * (static_cast<double>(x[i]) - m) * r;
    }
  }
  MX_HOST_DEVICE void apply(int64_t row, double sum_g, double sum_gx, int64_t thread,
                            int64_t threads) const {
    if (req_dx == OpReq::kNull || view.channels == 0) return;
    const int64_t b = view.base(row);
    const double m = static_cast<double>(mean[row]), r = 1.0 / static_cast<double>(std[row]);
    const double n = static_cast<double>(view.channels);
    const double mean_g = sum_g / n, mean_gx = sum_gx / n;
    for (int64_t k = thread; k < view.channels; k += threads) {
      const int64_t i = b + k * view.inner;
      const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[k]);
      const double xhat = (static_cast<double>(x[i]) - m) * r;
      assign(dx + i, req_dx, static_cast<T>((g - mean_g - xhat * mean_gx) * r));
    }
  }
};

// The gamma and beta gradients: dgamma[c] = sum over rows of dy * xhat,
// dbeta[c] = sum of dy. Phase 1, one thread per (chunk, channel) with
// index chunk * channels + c, writes the chunk's sums to partial_gamma and
// partial_beta (chunks * channels each); phase 2, one thread per channel,
// adds them in chunk order.
template <typename T>
struct LayerNormParamGrad {
  LayerNormView view;
  const T* x;
  const T* dy;
  const T* mean;
  const T* std;
  T* dgamma;
  T* dbeta;
  OpReq req_gamma, req_beta;
  int64_t chunk_rows;  // rows per chunk (> 0)
  double* partial_gamma;
  double* partial_beta;

  MX_HOST_DEVICE int64_t chunks() const { return (view.rows() + chunk_rows - 1) / chunk_rows; }
  MX_HOST_DEVICE void sum_chunk(int64_t index) const {
    const int64_t chunk = index / view.channels, c = index % view.channels;
    const int64_t end =
        (chunk + 1) * chunk_rows < view.rows() ? (chunk + 1) * chunk_rows : view.rows();
    double g = 0, b = 0;
    for (int64_t row = chunk * chunk_rows; row < end; ++row) {
      const int64_t i = view.base(row) + c * view.inner;
      const double d = static_cast<double>(dy[i]);
      g += d * (static_cast<double>(x[i]) - static_cast<double>(mean[row])) /
           static_cast<double>(std[row]);
      b += d;
    }
    partial_gamma[index] = g;
    partial_beta[index] = b;
  }
  MX_HOST_DEVICE void finish(int64_t c) const {
    double g = 0, b = 0;
    for (int64_t chunk = 0; chunk < chunks(); ++chunk) {
      g += partial_gamma[chunk * view.channels + c];
      b += partial_beta[chunk * view.channels + c];
    }
    if (req_gamma != OpReq::kNull) assign(dgamma + c, req_gamma, static_cast<T>(g));
    if (req_beta != OpReq::kNull) assign(dbeta + c, req_beta, static_cast<T>(b));
  }
};

}  // namespace mx::op
