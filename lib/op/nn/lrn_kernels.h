// The per-element logic of the GPU LRN kernels, compiled by the CPU build
// too (tests/op/test_conv_kernels_host.cc runs it against the CPU operator).
// The CPU's formula exactly (lrn.cc): over the channels c - r .. c + r with
// r = (nsize - 1) / 2,
//   norm = knorm + alpha / nsize * sum x^2,  out = x * norm^-beta,
// and the hidden output tmp_norm holds norm for the backward pass. cuDNN's
// LRN has another window for an even nsize and no tmp_norm, so the GPU runs
// these instead.
#pragma once

#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "base/host_device.h"
#include "op/tensor_ref.h"

namespace mx::op {

struct LrnKernelGeom {
  int64_t batch = 0, channels = 0, plane = 0;  // plane = H * W
  int64_t radius = 0;
  float alpha = 1e-4f, beta = 0.75f, knorm = 2.0f;
  int nsize = 1;

  MX_HOST_DEVICE int64_t size() const { return batch * channels * plane; }
};

template <typename T>
MX_HOST_DEVICE inline T lrn_pow(T base, T exponent) {
#if defined(__CUDA_ARCH__)
  return pow(base, exponent);
#else
  return std::pow(base, exponent);
#endif
}

// The channel window [lo, hi] of element i and the offset of its channel 0.
struct LrnWindow {
  int64_t lo, hi, base, pixel;
};

MX_HOST_DEVICE inline LrnWindow lrn_window(const LrnKernelGeom& g, int64_t i) {
  const int64_t pixel = i % g.plane;
  const int64_t ch = (i / g.plane) % g.channels;
  const int64_t n = i / (g.plane * g.channels);
  const int64_t lo = ch - g.radius < 0 ? 0 : ch - g.radius;
  const int64_t hi = ch + g.radius > g.channels - 1 ? g.channels - 1 : ch + g.radius;
  return {lo, hi, n * g.channels * g.plane + pixel, pixel};
}

// y[i] (req) and norm[i] (always written, as on the CPU).
template <typename T>
struct LrnForward {
  LrnKernelGeom g;
  const T* x;
  T* y;
  T* norm;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t i) const {
    const LrnWindow w = lrn_window(g, i);
    T sum = 0;
    for (int64_t k = w.lo; k <= w.hi; ++k) {
      const T v = x[w.base + k * g.plane];
      sum += v * v;
    }
    const T scale = static_cast<T>(g.alpha) / static_cast<T>(g.nsize);
    const T n = static_cast<T>(g.knorm) + scale * sum;
    norm[i] = n;
    assign(y + i, req, x[i] * lrn_pow(n, -static_cast<T>(g.beta)));
  }
};

// dx[i] (req): d out[k] / d x[c] = -2 beta alpha/n x[c] x[k] norm[k]^(-beta-1)
// for c in the window of k, and x[k] norm[k]^(-beta-1) = out[k] / norm[k].
template <typename T>
struct LrnBackward {
  LrnKernelGeom g;
  const T* x;
  const T* y;
  const T* norm;
  const T* dy;
  T* dx;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t i) const {
    const LrnWindow w = lrn_window(g, i);
    T cross = 0;
    for (int64_t k = w.lo; k <= w.hi; ++k) {
      const int64_t j = w.base + k * g.plane;
      cross += dy[j] * y[j] / norm[j];
    }
    const T beta = static_cast<T>(g.beta);
    const T coef = T(2) * beta * static_cast<T>(g.alpha) / static_cast<T>(g.nsize);
    assign(dx + i, req, dy[i] * lrn_pow(norm[i], -beta) - coef * x[i] * cross);
  }
};

#if !defined(__CUDACC__)
// The geometry the LRN operator (lrn.cc) gives these kernels for attributes
// `attrs` on data of shape `data` (the host tests use it).
LrnKernelGeom lrn_kernel_geom(const std::map<std::string, std::string>& attrs, const Shape& data);
#endif

}  // namespace mx::op
