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
#include "op/compute_type.h"
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

// The kernels below compute indices in I: int64_t always works, int32_t
// where every index fits (pooling_gpu.cu picks it then; a 64-bit division is
// a long instruction sequence on a GPU, and these divide per element).

// The window of output (ph, pw): [h0, h1) x [w0, w1) within the data and the
// divisor of an average.
template <typename I>
struct PoolWindowRange {
  I h0, h1, w0, w1, divisor;
};

template <typename I>
MX_HOST_DEVICE inline I pool_min(I a, I b) {
  return a < b ? a : b;
}
template <typename I>
MX_HOST_DEVICE inline I pool_max(I a, I b) {
  return a < b ? b : a;
}

template <typename I>
MX_HOST_DEVICE inline PoolWindowRange<I> pool_window(const PoolKernelGeom& g, I ph, I pw) {
  const I height = static_cast<I>(g.height), width = static_cast<I>(g.width);
  const I pad_h = static_cast<I>(g.pad_h), pad_w = static_cast<I>(g.pad_w);
  I h0 = ph * static_cast<I>(g.stride_h) - pad_h, w0 = pw * static_cast<I>(g.stride_w) - pad_w;
  I h1 = pool_min<I>(h0 + static_cast<I>(g.kernel_h), height + pad_h);
  I w1 = pool_min<I>(w0 + static_cast<I>(g.kernel_w), width + pad_w);
  const I padded_area = (h1 - h0) * (w1 - w0);
  h0 = pool_max<I>(h0, 0);
  w0 = pool_max<I>(w0, 0);
  h1 = pool_min<I>(h1, height);
  w1 = pool_min<I>(w1, width);
  const I area = pool_max<I>(h1 - h0, 0) * pool_max<I>(w1 - w0, 0);
  return {h0, h1, w0, w1, g.include_pad ? padded_area : area};
}

// The value of output (ph, pw) of one plane `x` (16-bit floats computed in float).
template <typename T, typename I>
MX_HOST_DEVICE T pool_value(const PoolKernelGeom& g, const T* x, I ph, I pw) {
  using C = KernelCompute<T>;
  const PoolWindowRange<I> r = pool_window<I>(g, ph, pw);
  const I width = static_cast<I>(g.width);
  if (g.kind == PoolKind::kMax) {
    C value = std::numeric_limits<C>::lowest();
    for (I h = r.h0; h < r.h1; ++h)
      for (I w = r.w0; w < r.w1; ++w)
        if (value < C(x[h * width + w])) value = C(x[h * width + w]);
    return T(value);
  }
  C sum = 0;
  for (I h = r.h0; h < r.h1; ++h)
    for (I w = r.w0; w < r.w1; ++w) sum += C(x[h * width + w]);
  // An empty window (only padding) averages to 0, as in MXNet.
  if (g.kind == PoolKind::kSum) return T(sum);
  return T(r.divisor > 0 ? sum / static_cast<C>(r.divisor) : C(0));
}

// y[i] (req) for output index i in [0, out_size()).
template <typename T, typename I = int64_t>
struct PoolForward {
  PoolKernelGeom g;
  const T* x;
  T* y;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t index) const {
    const I i = static_cast<I>(index), out_w = static_cast<I>(g.out_width),
            out_h = static_cast<I>(g.out_height);
    const I pw = i % out_w;
    const I ph = (i / out_w) % out_h;
    const I plane = i / (out_w * out_h);
    assign(y + index, req,
           pool_value<T, I>(g, x + plane * static_cast<I>(g.height * g.width), ph, pw));
  }
};

// The outputs along one dim whose windows cover input position `pos`:
// [first, last] (empty when first > last).
template <typename I>
MX_HOST_DEVICE inline void pool_covering(I pos, I pad, I kernel, I stride, I out, I* first,
                                         I* last) {
  // o * stride - pad <= pos < o * stride - pad + kernel
  const I lo = pos + pad - kernel + 1;
  *first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  *last = pool_min<I>((pos + pad) / stride, out - 1);
}

// dx[i] (req) for input index i in [0, in_size()).
template <typename T, typename I = int64_t>
struct PoolBackward {
  PoolKernelGeom g;
  const T* x;
  const T* y;
  const T* dy;
  T* dx;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t index) const {
    const I i = static_cast<I>(index), width = static_cast<I>(g.width),
            height = static_cast<I>(g.height), out_w = static_cast<I>(g.out_width),
            out_h = static_cast<I>(g.out_height);
    const I w = i % width;
    const I h = (i / width) % height;
    const I plane = i / (width * height);
    const T* xp = x + plane * height * width;
    const I out_offset = plane * out_h * out_w;
    I ph0, ph1, pw0, pw1;
    pool_covering<I>(h, static_cast<I>(g.pad_h), static_cast<I>(g.kernel_h),
                     static_cast<I>(g.stride_h), out_h, &ph0, &ph1);
    pool_covering<I>(w, static_cast<I>(g.pad_w), static_cast<I>(g.kernel_w),
                     static_cast<I>(g.stride_w), out_w, &pw0, &pw1);
    using C = KernelCompute<T>;
    C grad = 0;
    for (I ph = ph0; ph <= ph1; ++ph) {
      for (I pw = pw0; pw <= pw1; ++pw) {
        const I o = out_offset + ph * out_w + pw;
        const PoolWindowRange<I> r = pool_window<I>(g, ph, pw);
        if (g.kind == PoolKind::kMax) {
          // Only an element equal to the maximum scans its window for an
          // earlier tie (global max pooling would otherwise scan the whole
          // plane once per element).
          if (C(xp[h * width + w]) == C(y[o]) && first_max_at(xp, r, y[o]) == h * width + w)
            grad += C(dy[o]);
        } else if (g.kind == PoolKind::kSum) {
          grad += C(dy[o]);
        } else if (r.divisor > 0) {
          grad += C(dy[o]) / static_cast<C>(r.divisor);
        }
      }
    }
    assign(dx + index, req, T(grad));
  }

  // The plane offset of the first element of window r equal to `max`, -1 if none.
  MX_HOST_DEVICE I first_max_at(const T* xp, const PoolWindowRange<I>& r, T max) const {
    const I width = static_cast<I>(g.width);
    for (I hh = r.h0; hh < r.h1; ++hh)
      for (I ww = r.w0; ww < r.w1; ++ww)
        if (KernelCompute<T>(xp[hh * width + ww]) == KernelCompute<T>(max)) return hh * width + ww;
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
