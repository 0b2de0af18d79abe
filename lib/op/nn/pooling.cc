// Pooling (max, avg, sum; 1-D and 2-D; valid/full conventions; global
// pooling) with MXNet's window rules: a max window is clipped to the data,
// an average divides by the window clipped to data + padding
// (count_include_pad) or to the data alone.
#include <algorithm>
#include <limits>
#include <optional>
#include <type_traits>

#include "base/parallel.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/conv_util.h"
#include "op/nn/pooling_kernels.h"
#include "op/nn/pooling_param.h"
#include "op/registry.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_pooling.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/pooling_gpu.h"
#endif

namespace mx::op {
namespace {

int64_t pooled_size(const PoolingParam& p, const Window2d& w, int k, int64_t size) {
  const int64_t span = size + 2 * w.pad[k] - w.kernel[k];
  if (span < 0)
    throw ShapeError(str("kernel size ", w.kernel[k], " exceeds input size ", size, " padded to ",
                         size + 2 * w.pad[k]));
  if (p.pooling_convention == PoolingConvention::kFull)
    return 1 + (span + w.stride[k] - 1) / w.stride[k];
  return 1 + span / w.stride[k];
}

void infer_pooling(const PoolingParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  int rank = data.ndim();
  if (!p.global_pool) {
    rank = p.kernel.ndim() + 2;
  } else if (!data.rank_known()) {
    rank = out[0].ndim();
  }
  if (rank < 0) return;  // global pooling of data of unknown rank
  if (rank != 3 && rank != 4)
    throw ShapeError(str("input 'data' must be 3-D (N, C, W) or 4-D (N, C, H, W), but has shape ",
                         data.to_string()));
  require_ndim(data, rank, "input 'data'");
  require_ndim(out[0], rank, "output");
  // Batch and channels pass through in both directions.
  Shape nc = Shape::filled(rank, -1);
  for (const Shape* s : {&data, &out[0]}) {
    if (!s->rank_known()) continue;
    for (int i = 0; i < 2; ++i)
      if ((*s)[i] >= 0) nc[i] = (*s)[i];
  }
  Shape o = nc;
  if (p.global_pool) {
    for (int i = 2; i < rank; ++i) o[i] = 1;
  } else if (data.rank_known()) {
    const Window2d w = p.window("Pooling");
    for (int d = 0; d < w.ndim; ++d)
      if (data[2 + d] >= 0) o[2 + d] = pooled_size(p, w, d + 2 - w.ndim, data[2 + d]);
  }
  assign_shape(out[0], o, "output");
  assign_shape(data, nc, "input 'data'");
}

// One plane's geometry.
struct PoolGeom {
  int64_t height, width, out_height, out_width;
  Window2d win;
};

PoolGeom pool_geom(const PoolingParam& p, const Shape& data, const Shape& out) {
  PoolGeom g;
  g.win = p.window_for(data);
  const bool one_d = data.ndim() == 3;
  g.height = one_d ? 1 : data[2];
  g.width = data[data.ndim() - 1];
  g.out_height = one_d ? 1 : out[2];
  g.out_width = out[out.ndim() - 1];
  return g;
}

// The window of output (ph, pw): [h0, h1) x [w0, w1) clipped to the data,
// and the divisor of an average.
struct PoolWindow {
  int64_t h0, h1, w0, w1;
  int64_t divisor;
};

PoolWindow window_at(const PoolGeom& g, int64_t ph, int64_t pw, bool include_pad) {
  const Window2d& w = g.win;
  int64_t h0 = ph * w.stride[0] - w.pad[0], w0 = pw * w.stride[1] - w.pad[1];
  int64_t h1 = std::min(h0 + w.kernel[0], g.height + w.pad[0]);
  int64_t w1 = std::min(w0 + w.kernel[1], g.width + w.pad[1]);
  const int64_t padded_area = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.height);
  w1 = std::min(w1, g.width);
  const int64_t area = std::max<int64_t>(h1 - h0, 0) * std::max<int64_t>(w1 - w0, 0);
  return {h0, h1, w0, w1, include_pad ? padded_area : area};
}

template <typename T>
void pool_plane(const PoolingParam& p, const PoolGeom& g, const T* x, T* y, OpReq req) {
  const bool include_pad = p.count_include_pad.value_or(true);
  for (int64_t ph = 0; ph < g.out_height; ++ph) {
    for (int64_t pw = 0; pw < g.out_width; ++pw) {
      const PoolWindow win = window_at(g, ph, pw, include_pad);
      T value;
      if (p.pool_type == PoolType::kMax) {
        value = std::numeric_limits<T>::lowest();
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w) value = std::max(value, x[h * g.width + w]);
      } else {
        // bfloat16 sums in float, rounded once.
        using Acc = std::conditional_t<is_half_like_v<T>, float, T>;
        Acc sum = 0;
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w) sum += x[h * g.width + w];
        // An empty window (only padding) averages to 0, as in MXNet.
        value = p.pool_type == PoolType::kSum ? T(sum)
                : win.divisor > 0             ? T(sum / static_cast<Acc>(win.divisor))
                                              : T(0);
      }
      assign(y + ph * g.out_width + pw, req, value);
    }
  }
}

template <typename T>
void unpool_plane(const PoolingParam& p, const PoolGeom& g, const T* x, const T* y, const T* dy,
                  T* dx) {
  const bool include_pad = p.count_include_pad.value_or(true);
  for (int64_t ph = 0; ph < g.out_height; ++ph) {
    for (int64_t pw = 0; pw < g.out_width; ++pw) {
      const PoolWindow win = window_at(g, ph, pw, include_pad);
      const int64_t o = ph * g.out_width + pw;
      if (p.pool_type == PoolType::kMax) {
        // The first element equal to the maximum takes the gradient.
        bool found = false;
        for (int64_t h = win.h0; h < win.h1 && !found; ++h)
          for (int64_t w = win.w0; w < win.w1 && !found; ++w)
            if (x[h * g.width + w] == y[o]) {
              dx[h * g.width + w] += dy[o];
              found = true;
            }
      } else {
        T share = dy[o];
        if (p.pool_type == PoolType::kAvg)
          share = win.divisor > 0 ? T(share / static_cast<T>(win.divisor)) : T(0);
        for (int64_t h = win.h0; h < win.h1; ++h)
          for (int64_t w = win.w0; w < win.w1; ++w) dx[h * g.width + w] += share;
      }
    }
  }
}

// The case as oneDNN sees it; sum pooling stays with the reference kernel.
std::optional<PoolSpec> dnnl_spec(const PoolingParam& p, const PoolGeom& g, const Shape& data,
                                  DType dtype = DType::kFloat32) {
  if (p.pool_type == PoolType::kSum) return std::nullopt;
  PoolSpec s;
  s.batch = data[0];
  s.channels = data[1];
  s.height = g.height;
  s.width = g.width;
  s.out_height = g.out_height;
  s.out_width = g.out_width;
  s.win = g.win;
  s.max = p.pool_type == PoolType::kMax;
  s.include_pad = p.count_include_pad.value_or(true);
  s.dtype = dtype;
  return s;
}

int64_t plane_grain(const PoolGeom& g) {
  return std::max<int64_t>(
      1, kParallelGrain /
             std::max<int64_t>(1, g.out_height * g.out_width * g.win.kernel[0] * g.win.kernel[1]));
}

template <typename T>
void pooling_forward(const PoolingParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const Shape& xs = c.inputs[0].shape;
  const PoolGeom g = pool_geom(p, xs, c.outputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
#if MX_USE_DNNL
  // bfloat16 where the CPU has the instructions (else the reference kernel).
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16_t>)
    if (dnnl_enabled() && (std::is_same_v<T, float> || dnnl_bf16_available()))
      if (auto spec = dnnl_spec(p, g, xs, dtype_of<T>);
          spec && dnnl_impl::pool_forward(*spec, x, y, c.req[0], c.resources))
        return;
#endif
  const int64_t in_plane = g.height * g.width, out_plane = g.out_height * g.out_width;
  parallel_for(xs[0] * xs[1], plane_grain(g), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      pool_plane(p, g, x + i * in_plane, y + i * out_plane, c.req[0]);
  });
}

template <typename T>
void pooling_backward(const PoolingParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const Shape& xs = c.inputs[0].shape;
  const PoolGeom g = pool_geom(p, xs, c.outputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const T* y = c.outputs[0].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  T* dx = c.in_grads[0].ptr<T>();
#if MX_USE_DNNL
  // bfloat16 where the CPU has the instructions (else the reference kernel).
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16_t>)
    if (dnnl_enabled() && (std::is_same_v<T, float> || dnnl_bf16_available()))
      if (auto spec = dnnl_spec(p, g, xs, dtype_of<T>);
          spec && dnnl_impl::pool_backward(*spec, x, dy, dx, c.req[0], c.resources))
        return;
#endif
  const int64_t in_plane = g.height * g.width, out_plane = g.out_height * g.out_width;
  // Each plane of dx is written by one chunk only.
  parallel_for(xs[0] * xs[1], plane_grain(g), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      T* plane = dx + i * in_plane;
      if (c.req[0] != OpReq::kAdd) std::fill(plane, plane + in_plane, T(0));
      unpool_plane(p, g, x + i * in_plane, y + i * out_plane, dy + i * out_plane, plane);
    }
  });
}

// The geometry of the shared per-element kernels (pooling_kernels.h).
PoolKernelGeom kernel_geom(const PoolingParam& p, const Shape& data, const Shape& out) {
  const PoolGeom g = pool_geom(p, data, out);
  PoolKernelGeom k;
  k.planes = data[0] * data[1];
  k.height = g.height;
  k.width = g.width;
  k.out_height = g.out_height;
  k.out_width = g.out_width;
  k.kernel_h = g.win.kernel[0];
  k.kernel_w = g.win.kernel[1];
  k.stride_h = g.win.stride[0];
  k.stride_w = g.win.stride[1];
  k.pad_h = g.win.pad[0];
  k.pad_w = g.win.pad[1];
  k.kind = p.pool_type == PoolType::kMax   ? PoolKind::kMax
           : p.pool_type == PoolType::kAvg ? PoolKind::kAvg
                                           : PoolKind::kSum;
  k.include_pad = p.count_include_pad.value_or(true);
  return k;
}

}  // namespace

// For the host tests of the GPU kernels: the kernel geometry of a Pooling
// with attributes `attrs` on data of shape `data`.
PoolKernelGeom pooling_kernel_geom(const AttrMap& attrs, const Shape& data) {
  const PoolingParam p = PoolingParam::from_strings(attrs, "Pooling");
  ShapeVector in{data}, aux, out{Shape()};
  infer_pooling(p, in, aux, out);
  return kernel_geom(p, data, out[0]);
}

void register_pooling_ops(OpRegistry& r) {
  auto pooling = r.add<PoolingParam>("Pooling").amp(AmpClass::kFollow);
  pooling.describe("1-D or 2-D max, average or sum pooling, optionally over the whole plane.")
      .inputs({"data"})
      .infer_shape(infer_pooling)
      .inference_layer([](const PoolingParam& p, const ShapeVector& in,
                          const ShapeVector& out) -> std::optional<InferenceLayer> {
        if (in[0].ndim() != 4) return std::nullopt;
        auto spec = dnnl_spec(p, pool_geom(p, in[0], out[0]), in[0]);
        if (!spec) return std::nullopt;
        InferenceLayer layer;
        layer.kind = LayerKind::kPooling;
        layer.pool = *spec;
        return layer;
      })
      .forward_cpu([](const PoolingParam& p, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, "Pooling",
                           [&](auto tag) { pooling_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const PoolingParam& p, const BackwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, "Pooling",
                           [&](auto tag) { pooling_backward<typename decltype(tag)::type>(p, c); });
      });
#if MX_USE_CUDA
  pooling
      .forward(DeviceKind::kGPU,
               [](const PoolingParam& p, const ForwardCall& c) {
                 cuda::pooling_forward_gpu(kernel_geom(p, c.inputs[0].shape, c.outputs[0].shape),
                                           c.inputs[0].dtype, c.inputs[0].data, c.outputs[0].data,
                                           c.req[0], c.rctx.stream);
               })
      .backward(DeviceKind::kGPU, [](const PoolingParam& p, const BackwardCall& c) {
        cuda::pooling_backward_gpu(kernel_geom(p, c.inputs[0].shape, c.outputs[0].shape),
                                   c.inputs[0].dtype, c.inputs[0].data, c.outputs[0].data,
                                   c.out_grads[0].data, c.in_grads[0].data, c.req[0],
                                   c.rctx.stream);
      });
#endif
}

}  // namespace mx::op
