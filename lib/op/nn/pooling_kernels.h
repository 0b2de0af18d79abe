// The per-element logic of the GPU Pooling kernels, compiled by the CPU
// build too (tests/op/test_conv_kernels_host.cc runs it against the CPU
// operator). Same rules as the CPU kernel in pooling.cc: a window is clipped
// to the data + padding for the divisor of an average (count_include_pad)
// and to the data for the values; max pooling ignores NaN like std::max and
// sends each window's gradient to its FIRST maximum (row-major), as MXNet.
//
// The forward pass computes one output per index; the backward pass one
// input element per index, gathering from the outputs whose windows cover
// it (no atomics, deterministic, in the CPU's order of outputs).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>

#include "base/host_device.h"
#include "op/tensor_ref.h"

namespace mx::op {

enum class PoolKind : int { kMax, kAvg, kSum };

// Everything a pooling kernel needs, in plain integers: `planes` images x
// channels of height x width (a 1-D pooling has height 1).
struct PoolKernelGeom {
  int64_t planes = 0;
  int64_t height = 1, width = 1, out_height = 1, out_width = 1;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
  PoolKind kind = PoolKind::kMax;
  bool include_pad = true;

  MX_HOST_DEVICE int64_t in_size() const { return planes * height * width; }
  MX_HOST_DEVICE int64_t out_size() const { return planes * out_height * out_width; }
};

// The window of output (ph, pw): [h0, h1) x [w0, w1) within the data and the
// divisor of an average.
struct PoolWindowRange {
  int64_t h0, h1, w0, w1, divisor;
};

MX_HOST_DEVICE inline int64_t pool_min(int64_t a, int64_t b) { return a < b ? a : b; }
MX_HOST_DEVICE inline int64_t pool_max(int64_t a, int64_t b) { return a < b ? b : a; }

MX_HOST_DEVICE inline PoolWindowRange pool_window(const PoolKernelGeom& g, int64_t ph, int64_t pw) {
  int64_t h0 = ph * g.stride_h - g.pad_h, w0 = pw * g.stride_w - g.pad_w;
  int64_t h1 = pool_min(h0 + g.kernel_h, g.height + g.pad_h);
  int64_t w1 = pool_min(w0 + g.kernel_w, g.width + g.pad_w);
  const int64_t padded_area = (h1 - h0) * (w1 - w0);
  h0 = pool_max(h0, 0);
  w0 = pool_max(w0, 0);
  h1 = pool_min(h1, g.height);
  w1 = pool_min(w1, g.width);
  const int64_t area = pool_max(h1 - h0, 0) * pool_max(w1 - w0, 0);
  return {h0, h1, w0, w1, g.include_pad ? padded_area : area};
}

// The value of output `o` of one plane `x`.
template <typename T>
MX_HOST_DEVICE T pool_value(const PoolKernelGeom& g, const T* x, int64_t ph, int64_t pw) {
  const PoolWindowRange r = pool_window(g, ph, pw);
  if (g.kind == PoolKind::kMax) {
    T value = std::numeric_limits<T>::lowest();
    for (int64_t h = r.h0; h < r.h1; ++h)
      for (int64_t w = r.w0; w < r.w1; ++w)
        if (value < x[h * g.width + w]) value = x[h * g.width + w];
    return value;
  }
  T sum = 0;
  for (int64_t h = r.h0; h < r.h1; ++h)
    for (int64_t w = r.w0; w < r.w1; ++w) sum += x[h * g.width + w];
  // An empty window (only padding) averages to 0, as in MXNet.
  if (g.kind == PoolKind::kSum) return sum;
  return r.divisor > 0 ? sum / static_cast<T>(r.divisor) : T(0);
}

// y[i] (req) for output index i in [0, out_size()).
template <typename T>
struct PoolForward {
  PoolKernelGeom g;
  const T* x;
  T* y;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t pw = i % g.out_width;
    const int64_t ph = (i / g.out_width) % g.out_height;
    const int64_t plane = i / (g.out_width * g.out_height);
    assign(y + i, req, pool_value(g, x + plane * g.height * g.width, ph, pw));
  }
};

// The outputs along one dim whose windows cover input position `pos`:
// [first, last] (empty when first > last).
MX_HOST_DEVICE inline void pool_covering(int64_t pos, int64_t pad, int64_t kernel, int64_t stride,
                                         int64_t out, int64_t* first, int64_t* last) {
  // o * stride - pad <= pos < o * stride - pad + kernel
  const int64_t lo = pos + pad - kernel + 1;
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  *last = pool_min((pos + pad) / stride, out - 1);
}

// dx[i] (req) for input index i in [0, in_size()).
template <typename T>
struct PoolBackward {
  PoolKernelGeom g;
  const T* x;
  const T* y;
  const T* dy;
  T* dx;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t w = i % g.width;
    const int64_t h = (i / g.width) % g.height;
    const int64_t plane = i / (g.width * g.height);
    const T* xp = x + plane * g.height * g.width;
    const int64_t out_offset = plane * g.out_height * g.out_width;
    int64_t ph0, ph1, pw0, pw1;
    pool_covering(h, g.pad_h, g.kernel_h, g.stride_h, g.out_height, &ph0, &ph1);
    pool_covering(w, g.pad_w, g.kernel_w, g.stride_w, g.out_width, &pw0, &pw1);
    T grad = 0;
    for (int64_t ph = ph0; ph <= ph1; ++ph) {
      for (int64_t pw = pw0; pw <= pw1; ++pw) {
        const int64_t o = out_offset + ph * g.out_width + pw;
        const PoolWindowRange r = pool_window(g, ph, pw);
        if (g.kind == PoolKind::kMax) {
          // Only an element equal to the maximum scans its window for an
          // earlier tie (global max pooling would otherwise scan the whole
          // plane once per element).
          if (xp[h * g.width + w] == y[o] && first_max_at(xp, r, y[o]) == h * g.width + w)
            grad += dy[o];
        } else if (g.kind == PoolKind::kSum) {
          grad += dy[o];
        } else if (r.divisor > 0) {
          grad += dy[o] / static_cast<T>(r.divisor);
        }
      }
    }
    assign(dx + i, req, grad);
  }

  // The plane offset of the first element of window r equal to `max`, -1 if none.
  MX_HOST_DEVICE int64_t first_max_at(const T* xp, const PoolWindowRange& r, T max) const {
    for (int64_t hh = r.h0; hh < r.h1; ++hh)
      for (int64_t ww = r.w0; ww < r.w1; ++ww)
        if (xp[hh * g.width + ww] == max) return hh * g.width + ww;
    return -1;
  }
};

#if !defined(__CUDACC__)
// The geometry the Pooling operator (pooling.cc) gives these kernels for
// attributes `attrs` on data of shape `data` (the host tests use it).
PoolKernelGeom pooling_kernel_geom(const std::map<std::string, std::string>& attrs,
                                   const Shape& data);
#endif

}  // namespace mx::op
