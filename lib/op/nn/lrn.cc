// LRN: local response normalization across channels (AlexNet),
//   out = x * (knorm + alpha / nsize * sum of x^2 over nearby channels)^-beta,
// over the channels c - (nsize-1)/2 .. c + (nsize-1)/2 (MXNet's oneDNN
// window, also for an even nsize). The hidden output 'tmp_norm' keeps the
// normalizer for the backward pass.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "base/parallel.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/lrn_kernels.h"
#include "op/registry.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_lrn.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/lrn_gpu.h"
#endif

namespace mx::op {
namespace {

struct LRNParam : Params<LRNParam> {
  float alpha = 1e-4f;
  float beta = 0.75f;
  float knorm = 2.0f;
  int nsize = 0;

  static void declare(ParamDecl<LRNParam>& d) {
    d.field("alpha", &LRNParam::alpha).set_default(1e-4f).describe("Scale of the sum of squares.");
    d.field("beta", &LRNParam::beta).set_default(0.75f).describe("Exponent of the normalizer.");
    d.field("knorm", &LRNParam::knorm).set_default(2.0f).describe("Offset of the normalizer.");
    d.field("nsize", &LRNParam::nsize)
        .set_lower_bound(1)
        .describe("Number of channels summed over (odd: centred on the channel).");
  }
};

void infer_lrn(const LRNParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  require_ndim(in[0], 4, "input 'data'");
  infer_same_shape(in, out);
}

struct LRNGeom {
  int64_t batch, channels, plane;
  int64_t radius;
};

LRNGeom lrn_geom(const LRNParam& p, const Shape& s) {
  return {s[0], s[1], s[2] * s[3], (p.nsize - 1) / 2};
}

int64_t plane_grain(const LRNGeom& g, const LRNParam& p) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.plane * p.nsize));
}

#if MX_USE_DNNL
dnnl_impl::LrnSpec dnnl_spec(const LRNParam& p, const Shape& s) {
  return {s[0], s[1], s[2], s[3], p.nsize, p.alpha, p.beta, p.knorm};
}
#endif

template <typename T>
void lrn_forward(const LRNParam& p, const ForwardCall& c) {
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() &&
        dnnl_impl::lrn_forward(dnnl_spec(p, c.inputs[0].shape), c.inputs[0].ptr<T>(),
                               c.outputs[0].ptr<T>(), c.req[0], c.resources))
      return;
#endif
  const LRNGeom g = lrn_geom(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  T* norm = c.outputs[1].ptr<T>();
  const T scale = static_cast<T>(p.alpha) / static_cast<T>(p.nsize);
  const T knorm = static_cast<T>(p.knorm), beta = static_cast<T>(p.beta);
  // One (image, channel) plane per step; each reads its neighbour channels.
  parallel_for(g.batch * g.channels, plane_grain(g, p), [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / g.channels, ch = row % g.channels;
      T* nrow = norm + row * g.plane;
      for (int64_t i = 0; i < g.plane; ++i) nrow[i] = 0;
      const int64_t lo = std::max<int64_t>(0, ch - g.radius);
      const int64_t hi = std::min<int64_t>(g.channels - 1, ch + g.radius);
      for (int64_t k = lo; k <= hi; ++k) {
        const T* xk = x + (n * g.channels + k) * g.plane;
        for (int64_t i = 0; i < g.plane; ++i) nrow[i] += xk[i] * xk[i];
      }
      const T* xr = x + row * g.plane;
      T* yr = y + row * g.plane;
      for (int64_t i = 0; i < g.plane; ++i) {
        nrow[i] = knorm + scale * nrow[i];
        assign(yr + i, c.req[0], xr[i] * std::pow(nrow[i], -beta));
      }
    }
  });
}

template <typename T>
void lrn_backward(const LRNParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() && dnnl_impl::lrn_backward(dnnl_spec(p, c.inputs[0].shape),
                                                  c.inputs[0].ptr<T>(), c.out_grads[0].ptr<T>(),
                                                  c.in_grads[0].ptr<T>(), c.req[0], c.resources))
      return;
#endif
  const LRNGeom g = lrn_geom(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const T* y = c.outputs[0].ptr<T>();
  const T* norm = c.outputs[1].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  T* dx = c.in_grads[0].ptr<T>();
  const T beta = static_cast<T>(p.beta);
  // d out[k] / d x[c] = -2 beta alpha/n x[c] x[k] norm[k]^(-beta-1) for c in
  // the window of k, and x[k] norm[k]^(-beta-1) = out[k] / norm[k].
  const T coef = T(2) * beta * static_cast<T>(p.alpha) / static_cast<T>(p.nsize);
  parallel_for(g.batch * g.channels, plane_grain(g, p), [&](int64_t begin, int64_t end) {
    std::vector<T> cross(static_cast<size_t>(g.plane));  // one buffer per chunk
    for (int64_t row = begin; row < end; ++row) {
      const int64_t n = row / g.channels, ch = row % g.channels;
      const int64_t lo = std::max<int64_t>(0, ch - g.radius);
      const int64_t hi = std::min<int64_t>(g.channels - 1, ch + g.radius);
      std::fill(cross.begin(), cross.end(), T(0));
      for (int64_t k = lo; k <= hi; ++k) {
        const int64_t off = (n * g.channels + k) * g.plane;
        for (int64_t i = 0; i < g.plane; ++i)
          cross[static_cast<size_t>(i)] += dy[off + i] * y[off + i] / norm[off + i];
      }
      const T* xr = x + row * g.plane;
      const T* nr = norm + row * g.plane;
      const T* dyr = dy + row * g.plane;
      T* dxr = dx + row * g.plane;
      for (int64_t i = 0; i < g.plane; ++i)
        assign(dxr + i, c.req[0],
               dyr[i] * std::pow(nr[i], -beta) - coef * xr[i] * cross[static_cast<size_t>(i)]);
    }
  });
}

// The geometry of the shared per-element kernels (lrn_kernels.h).
LrnKernelGeom kernel_geom(const LRNParam& p, const Shape& s) {
  const LRNGeom g = lrn_geom(p, s);
  LrnKernelGeom k;
  k.batch = g.batch;
  k.channels = g.channels;
  k.plane = g.plane;
  k.radius = g.radius;
  k.alpha = p.alpha;
  k.beta = p.beta;
  k.knorm = p.knorm;
  k.nsize = p.nsize;
  return k;
}

}  // namespace

LrnKernelGeom lrn_kernel_geom(const AttrMap& attrs, const Shape& data) {
  return kernel_geom(LRNParam::from_strings(attrs, "LRN"), data);
}

void register_lrn_ops(OpRegistry& r) {
  auto lrn = r.add<LRNParam>("LRN").amp(AmpClass::kFloat32);
  lrn.describe("Local response normalization across channels of NCHW data.")
      .inputs({"data"})
      .outputs({"output", "tmp_norm"})
      .visible_outputs([](const LRNParam&) { return 1; })
      .infer_shape(infer_lrn)
      .forward_cpu([](const LRNParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LRN",
                      [&](auto tag) { lrn_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const LRNParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LRN",
                      [&](auto tag) { lrn_backward<typename decltype(tag)::type>(p, c); });
      });
#if MX_USE_CUDA
  lrn.forward(DeviceKind::kGPU,
              [](const LRNParam& p, const ForwardCall& c) {
                cuda::lrn_forward_gpu(kernel_geom(p, c.inputs[0].shape), c.inputs[0].dtype,
                                      c.inputs[0].data, c.outputs[0].data, c.outputs[1].data,
                                      c.req[0], c.rctx.stream);
              })
      .backward(DeviceKind::kGPU, [](const LRNParam& p, const BackwardCall& c) {
        cuda::lrn_backward_gpu(kernel_geom(p, c.inputs[0].shape), c.inputs[0].dtype,
                               c.inputs[0].data, c.outputs[0].data, c.outputs[1].data,
                               c.out_grads[0].data, c.in_grads[0].data, c.req[0], c.rctx.stream);
      });
#endif
}

}  // namespace mx::op
