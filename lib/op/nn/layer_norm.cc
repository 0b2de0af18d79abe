// LayerNorm with MXNet 1.9.1's semantics: each vector along `axis` is
// normalized by its own mean and std = sqrt(biased variance + eps), then
// scaled by gamma and shifted by beta (both of the axis' length). Three
// outputs, output, mean and std (mean and std keep the axis as size 1);
// only output is visible unless output_mean_var. As in MXNet, no gradient
// flows back through the mean and std outputs.
//
// The CPU kernels: with the axis last (the usual case) one row is a
// contiguous vector and each row is read once for its statistics (shifted
// float64 sums in several lanes, layer_norm_kernels.h) and once for the
// output, rows in parallel; other axes go through (outer, inner) blocks
// read contiguously. The gamma and beta gradients add fixed chunks of rows
// in order, so they do not depend on the thread count. The GPU kernels
// (layer_norm_gpu.cu) run one block per row.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/layer_norm_kernels.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/sequence_gpu.h"
#endif

namespace mx::op {
namespace {

struct LayerNormParam : Params<LayerNormParam> {
  int axis = -1;
  float eps = 1e-5f;
  bool output_mean_var = false;
  static void declare(ParamDecl<LayerNormParam>& d) {
    d.field("axis", &LayerNormParam::axis)
        .set_default(-1)
        .describe("The axis to normalize along; negative counts from the end.");
    d.field("eps", &LayerNormParam::eps)
        .set_default(1e-5f)
        .set_lower_bound(0.0f)
        .describe("Added to the variance before taking its square root.");
    d.field("output_mean_var", &LayerNormParam::output_mean_var)
        .set_default(false)
        .describe("Also output the mean and std (no gradient flows back through them).");
  }
};

int layer_norm_axis(const LayerNormParam& p, const Shape& data) {
  const int nd = data.ndim();
  if (p.axis < -nd || p.axis >= nd)
    throw ShapeError(
        str("axis ", p.axis, " is out of range for ", nd, "-D input 'data' ", data.to_string()));
  return p.axis < 0 ? p.axis + nd : p.axis;
}

LayerNormView layer_norm_view(const LayerNormParam& p, const Shape& data) {
  const int axis = layer_norm_axis(p, data);
  return {data.prod(0, axis), data[axis], data.prod(axis + 1, data.ndim())};
}

void infer_layer_norm(const LayerNormParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  assign_shape(data, out[0], "input 'data'");
  if (data.rank_known() && data.ndim() == 0)
    throw ShapeError("input 'data' must have at least 1 dimension");
  const int axis = data.rank_known() ? layer_norm_axis(p, data) : -1;
  Shape channels = Shape::filled(1, -1);
  if (axis >= 0) channels[0] = data[axis];
  assign_shape(channels, in[1], "input 'gamma'");
  assign_shape(channels, in[2], "input 'beta'");
  assign_shape(in[1], channels, "input 'gamma'");
  assign_shape(in[2], channels, "input 'beta'");
  if (axis >= 0 && data[axis] < 0 && channels[0] >= 0) {
    Shape c = Shape::filled(data.ndim(), -1);
    c[axis] = channels[0];
    assign_shape(data, c, "input 'data'");
  }
  assign_shape(out[0], data, "output");
  if (axis >= 0) {
    Shape stats = data;
    stats[axis] = 1;
    assign_shape(out[1], stats, "output 'mean'");
    assign_shape(out[2], stats, "output 'std'");
  }
}

// ---- forward ----------------------------------------------------------------

// A contiguous row's statistics in one pass: shifted sums in kLanes
// independent float64 accumulators (a fixed order the compiler vectorizes).
template <typename T>
LayerNormStats contiguous_row_stats(const T* x, int64_t n, double eps) {
  constexpr int kLanes = 8;
  const double x0 = n > 0 ? static_cast<double>(x[0]) : 0.0;
  if constexpr (std::is_same_v<T, float>) {  // the same sums in SIMD lanes
    double sum = 0, sq = 0;
    vmath::active().row_sums(x, n, x0, &sum, &sq);
    return layer_norm_stats(x0, sum, sq, n, eps);
  }
  double s[kLanes] = {}, q[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(x[k + j]) - x0;
      s[j] += d;
      q[j] += d * d;
    }
  double sum = 0, sq = 0;
  for (int j = 0; j < kLanes; ++j) {
    sum += s[j];
    sq += q[j];
  }
  for (; k < n; ++k) {
    const double d = static_cast<double>(x[k]) - x0;
    sum += d;
    sq += d * d;
  }
  return layer_norm_stats(x0, sum, sq, n, eps);
}

template <typename T>
void forward_last_axis(const LayerNormForwardRow<T>& f) {
  const int64_t n = f.view.channels;
  parallel_for(f.view.rows(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t row = r0; row < r1; ++row) {
                   const T* x = f.x + row * n;
                   const LayerNormStats s = contiguous_row_stats(x, n, f.eps);
                   f.finish(row, s);
                   if (f.req_y == OpReq::kNull) continue;
                   const T m = static_cast<T>(s.mean), r = static_cast<T>(1.0 / s.std);
                   T* y = f.y + row * n;
                   if constexpr (std::is_same_v<T, float>) {
                     if (f.req_y != OpReq::kAdd) {
                       vmath::active().normalize_row(x, f.gamma, f.beta, y, n, m, r);
                       continue;
                     }
                   }
                   if (f.req_y == OpReq::kAdd) {
                     for (int64_t k = 0; k < n; ++k)
                       y[k] += (x[k] - m) * r * f.gamma[k] + f.beta[k];
                   } else {
                     for (int64_t k = 0; k < n; ++k) y[k] = (x[k] - m) * r * f.gamma[k] + f.beta[k];
                   }
                 }
               });
}

// Axis not last: for each outer index the inner positions are the rows,
// accumulated side by side while the channels are read in memory order.
template <typename T>
void forward_inner_axis(const LayerNormForwardRow<T>& f) {
  const LayerNormView& v = f.view;
  const int64_t block = v.channels * v.inner;
  parallel_for(v.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(block, 1)),
               [&](int64_t o0, int64_t o1) {
                 std::vector<double> shift(static_cast<size_t>(v.inner));
                 std::vector<double> sum(shift.size()), sq(shift.size());
                 std::vector<LayerNormStats> stats(shift.size());
                 for (int64_t o = o0; o < o1; ++o) {
                   const T* x = f.x + o * block;
                   std::fill(sum.begin(), sum.end(), 0.0);
                   std::fill(sq.begin(), sq.end(), 0.0);
                   for (int64_t j = 0; j < v.inner; ++j)
                     shift[static_cast<size_t>(j)] = v.channels > 0 ? x[j] : 0.0;
                   for (int64_t k = 0; k < v.channels; ++k)
                     for (int64_t j = 0; j < v.inner; ++j) {
                       const auto jj = static_cast<size_t>(j);
                       const double d = static_cast<double>(x[k * v.inner + j]) - shift[jj];
                       sum[jj] += d;
                       sq[jj] += d * d;
                     }
                   for (int64_t j = 0; j < v.inner; ++j) {
                     const auto jj = static_cast<size_t>(j);
                     stats[jj] = layer_norm_stats(shift[jj], sum[jj], sq[jj], v.channels, f.eps);
                     f.finish(o * v.inner + j, stats[jj]);
                   }
                   if (f.req_y == OpReq::kNull) continue;
                   T* y = f.y + o * block;
                   for (int64_t k = 0; k < v.channels; ++k)
                     for (int64_t j = 0; j < v.inner; ++j) {
                       const LayerNormStats& s = stats[static_cast<size_t>(j)];
                       const T m = static_cast<T>(s.mean), r = static_cast<T>(1.0 / s.std);
                       const int64_t i = k * v.inner + j;
                       assign(y + i, f.req_y, (x[i] - m) * r * f.gamma[k] + f.beta[k]);
                     }
                 }
               });
}

template <typename T>
LayerNormForwardRow<T> forward_row(const LayerNormParam& p, const ForwardCall& c) {
  return {layer_norm_view(p, c.inputs[0].shape),
          c.inputs[0].ptr<T>(),
          c.inputs[1].ptr<T>(),
          c.inputs[2].ptr<T>(),
          c.outputs[0].ptr<T>(),
          c.outputs[1].ptr<T>(),
          c.outputs[2].ptr<T>(),
          c.req[0],
          c.req[1],
          c.req[2],
          static_cast<double>(p.eps)};
}

template <typename T>
void layer_norm_forward(const LayerNormParam& p, const ForwardCall& c) {
  const LayerNormForwardRow<T> f = forward_row<T>(p, c);
  if (f.view.inner == 1)
    forward_last_axis(f);
  else
    forward_inner_axis(f);
}

// ---- backward ---------------------------------------------------------------

// One float row's data gradient on vmath's kernels (req write or inplace).
void data_grad_row_simd(const LayerNormBackwardRow<float>& f, int64_t row) {
  const int64_t n = f.view.channels;
  const float* x = f.x + row * n;
  const float* dy = f.dy + row * n;
  const double m = f.mean[row], r = 1.0 / static_cast<double>(f.std[row]);
  const vmath::Kernels& vk = vmath::active();
  double sum_g = 0, sum_gx = 0;
  vk.norm_grad_sums(x, dy, f.gamma, n, m, &sum_g, &sum_gx);
  vk.norm_grad_row(x, dy, f.gamma, f.dx + row * n, n, static_cast<float>(m),
                   static_cast<float>(sum_g / static_cast<double>(n)),
                   static_cast<float>(sum_gx * r * r / static_cast<double>(n)),
                   static_cast<float>(r));
}

template <typename T>
void data_grad_last_axis(const LayerNormBackwardRow<T>& f) {
  constexpr int kLanes = 8;
  const int64_t n = f.view.channels;
  parallel_for(f.view.rows(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t row = r0; row < r1; ++row) {
                   if constexpr (std::is_same_v<T, float>) {  // the same in SIMD lanes
                     if (f.req_dx != OpReq::kAdd) {
                       data_grad_row_simd(f, row);
                       continue;
                     }
                   }
                   const T* x = f.x + row * n;
                   const T* dy = f.dy + row * n;
                   const double m = f.mean[row], r = 1.0 / static_cast<double>(f.std[row]);
                   T* dx = f.dx + row * n;
                   double a[kLanes] = {}, b[kLanes] = {};
                   int64_t k = 0;
                   for (; k + kLanes <= n; k += kLanes)
                     for (int j = 0; j < kLanes; ++j) {
                       const double g = static_cast<double>(dy[k + j]) * f.gamma[k + j];
                       a[j] += g;
                       b[j] += g * (static_cast<double>(x[k + j]) - m);
                     }
                   double sum_g = 0, sum_gx = 0;
                   for (int j = 0; j < kLanes; ++j) {
                     sum_g += a[j];
                     sum_gx += b[j];
                   }
                   for (; k < n; ++k) {
                     const double g = static_cast<double>(dy[k]) * f.gamma[k];
                     sum_g += g;
                     sum_gx += g * (static_cast<double>(x[k]) - m);
                   }
                   // dx = (g - mean(g) - (x - mean) r^2 mean(g (x - mean))) r
                   const T mg = static_cast<T>(sum_g / static_cast<double>(n));
                   const T k2 = static_cast<T>(sum_gx * r * r / static_cast<double>(n));
                   const T mt = static_cast<T>(m), rt = static_cast<T>(r);
                   if (f.req_dx == OpReq::kAdd) {
                     for (int64_t e = 0; e < n; ++e)
                       dx[e] += (dy[e] * f.gamma[e] - mg - (x[e] - mt) * k2) * rt;
                   } else {
                     for (int64_t e = 0; e < n; ++e)
                       dx[e] = (dy[e] * f.gamma[e] - mg - (x[e] - mt) * k2) * rt;
                   }
                 }
               });
}

// Axis not last: per outer index, the inner positions' sums side by side,
// then dx = (g - mean(g) - xhat mean(g xhat)) r in memory order.
template <typename T>
void data_grad_inner_axis(const LayerNormBackwardRow<T>& f) {
  const LayerNormView& v = f.view;
  const int64_t block = v.channels * v.inner;
  const double n = static_cast<double>(v.channels);
  parallel_for(v.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(block, 1)),
               [&](int64_t o0, int64_t o1) {
                 const auto inner = static_cast<size_t>(v.inner);
                 std::vector<double> m(inner), r(inner), sum_g(inner), sum_gx(inner);
                 for (int64_t o = o0; o < o1; ++o) {
                   for (size_t j = 0; j < inner; ++j) {
                     m[j] = f.mean[o * v.inner + static_cast<int64_t>(j)];
                     r[j] = 1.0 / static_cast<double>(f.std[o * v.inner + static_cast<int64_t>(j)]);
                   }
                   std::fill(sum_g.begin(), sum_g.end(), 0.0);
                   std::fill(sum_gx.begin(), sum_gx.end(), 0.0);
                   const T* x = f.x + o * block;
                   const T* dy = f.dy + o * block;
                   for (int64_t k = 0; k < v.channels; ++k)
                     for (size_t j = 0; j < inner; ++j) {
                       const size_t i = static_cast<size_t>(k * v.inner) + j;
                       const double g = static_cast<double>(dy[i]) * f.gamma[k];
                       sum_g[j] += g;
                       sum_gx[j] += g * (static_cast<double>(x[i]) - m[j]) * r[j];
                     }
                   // Reuse the sums as the coefficients: mean(g) and mean(g xhat) r.
                   for (size_t j = 0; j < inner; ++j) {
                     sum_g[j] /= n;
                     sum_gx[j] = sum_gx[j] / n * r[j];
                   }
                   T* dx = f.dx + o * block;
                   for (int64_t k = 0; k < v.channels; ++k)
                     for (size_t j = 0; j < inner; ++j) {
                       const size_t i = static_cast<size_t>(k * v.inner) + j;
                       const double g = static_cast<double>(dy[i]) * f.gamma[k];
                       const double value =
                           (g - sum_g[j] - (static_cast<double>(x[i]) - m[j]) * sum_gx[j]) * r[j];
                       assign(dx + i, f.req_dx, static_cast<T>(value));
                     }
                 }
               });
}

// Rows per chunk of the gamma and beta gradients: a fixed number, so the
// order of the additions is the same on every machine.
constexpr int64_t kParamGradChunkRows = 64;

// With `data` (float rows only), each row's data gradient is computed
// right after its parameter-gradient sums, while the row is in cache: x and
// dy are read from memory once instead of twice.
template <typename T>
void param_grad_last_axis(const LayerNormParamGrad<T>& f,
                          const LayerNormBackwardRow<T>* data = nullptr) {
  const int64_t n = f.view.channels, rows = f.view.rows();
  parallel_for(f.chunks(), 1, [&](int64_t c0, int64_t c1) {
    for (int64_t chunk = c0; chunk < c1; ++chunk) {
      double* pg = f.partial_gamma + chunk * n;
      double* pb = f.partial_beta + chunk * n;
      std::fill(pg, pg + n, 0.0);
      std::fill(pb, pb + n, 0.0);
      const int64_t end = std::min(rows, (chunk + 1) * f.chunk_rows);
      for (int64_t row = chunk * f.chunk_rows; row < end; ++row) {
        const T* x = f.x + row * n;
        const T* dy = f.dy + row * n;
        const double m = f.mean[row], r = 1.0 / static_cast<double>(f.std[row]);
        if constexpr (std::is_same_v<T, float>) {
          vmath::active().norm_param_grad_row(x, dy, n, m, r, pg, pb);
          if (data != nullptr) data_grad_row_simd(*data, row);  // dx may be dy: after its read
          continue;
        }
        for (int64_t k = 0; k < n; ++k) {
          const double d = dy[k];
          pg[k] += d * (static_cast<double>(x[k]) - m) * r;
          pb[k] += d;
        }
      }
    }
  });
  parallel_for(n, kParallelGrain, [&](int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k) f.finish(k);
  });
}

template <typename T>
void param_grad_inner_axis(const LayerNormParamGrad<T>& f) {
  const LayerNormView& v = f.view;
  // 1/std per row, once (one value per row, far fewer than the elements).
  std::vector<double> r(static_cast<size_t>(v.rows()));
  for (int64_t row = 0; row < v.rows(); ++row)
    r[static_cast<size_t>(row)] = 1.0 / static_cast<double>(f.std[row]);
  parallel_for(v.channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(v.rows(), 1)),
               [&](int64_t k0, int64_t k1) {
                 for (int64_t k = k0; k < k1; ++k) {
                   double g = 0, b = 0;
                   for (int64_t o = 0; o < v.outer; ++o) {
                     const int64_t at = (o * v.channels + k) * v.inner;
                     const T* x = f.x + at;
                     const T* dy = f.dy + at;
                     const T* mean = f.mean + o * v.inner;
                     const double* ro = r.data() + o * v.inner;
                     for (int64_t j = 0; j < v.inner; ++j) {
                       const double d = dy[j];
                       g += d * (static_cast<double>(x[j]) - mean[j]) * ro[j];
                       b += d;
                     }
                   }
                   if (f.req_gamma != OpReq::kNull)
                     assign(f.dgamma + k, f.req_gamma, static_cast<T>(g));
                   if (f.req_beta != OpReq::kNull)
                     assign(f.dbeta + k, f.req_beta, static_cast<T>(b));
                 }
               });
}

template <typename T>
T* grad_or_null(const BackwardCall& c, size_t i) {
  return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>();
}

template <typename T>
LayerNormBackwardRow<T> backward_row(const LayerNormParam& p, const BackwardCall& c) {
  return {layer_norm_view(p, c.inputs[0].shape),
          c.inputs[0].ptr<T>(),
          c.inputs[1].ptr<T>(),
          c.out_grads[0].ptr<T>(),
          c.outputs[1].ptr<T>(),
          c.outputs[2].ptr<T>(),
          grad_or_null<T>(c, 0),
          c.req[0]};
}

// The parameter-gradient functor, with its partial sums in temporary space
// when `chunked`.
template <typename T>
LayerNormParamGrad<T> param_grad(const LayerNormParam& p, const BackwardCall& c, bool chunked) {
  LayerNormParamGrad<T> f{layer_norm_view(p, c.inputs[0].shape),
                          c.inputs[0].ptr<T>(),
                          c.out_grads[0].ptr<T>(),
                          c.outputs[1].ptr<T>(),
                          c.outputs[2].ptr<T>(),
                          grad_or_null<T>(c, 1),
                          grad_or_null<T>(c, 2),
                          c.req[1],
                          c.req[2],
                          kParamGradChunkRows,
                          nullptr,
                          nullptr};
  if (chunked) {
    const auto count = static_cast<size_t>(f.chunks() * f.view.channels);
    auto* space = static_cast<double*>(c.resources.temp_space(2 * count * sizeof(double)));
    f.partial_gamma = space;
    f.partial_beta = space + count;
  }
  return f;
}

template <typename T>
void layer_norm_backward(const LayerNormParam& p, const BackwardCall& c) {
  const LayerNormBackwardRow<T> f = backward_row<T>(p, c);
  const bool last_axis = f.view.inner == 1;
  const bool param_grads = c.req[1] != OpReq::kNull || c.req[2] != OpReq::kNull;
  // float rows of the last axis: the data gradient joins the parameter
  // gradient's pass over the rows.
  const bool joined = std::is_same_v<T, float> && last_axis && param_grads &&
                      f.req_dx != OpReq::kNull && f.req_dx != OpReq::kAdd;
  if (f.req_dx != OpReq::kNull && !joined) {
    if (last_axis)
      data_grad_last_axis(f);
    else
      data_grad_inner_axis(f);
  }
  if (!param_grads) return;
  const LayerNormParamGrad<T> g = param_grad<T>(p, c, last_axis);
  if (last_axis)
    param_grad_last_axis(g, joined ? &f : nullptr);
  else
    param_grad_inner_axis(g);
}

#if MX_USE_CUDA
template <typename T>
void layer_norm_forward_gpu(const LayerNormParam& p, const ForwardCall& c) {
  cuda::layer_norm_forward(forward_row<T>(p, c), c.rctx.stream);
}

template <typename T>
void layer_norm_backward_gpu(const LayerNormParam& p, const BackwardCall& c) {
  const LayerNormBackwardRow<T> f = backward_row<T>(p, c);
  if (f.req_dx != OpReq::kNull) cuda::layer_norm_data_grad(f, c.rctx.stream);
  if (c.req[1] == OpReq::kNull && c.req[2] == OpReq::kNull) return;
  cuda::layer_norm_param_grad(param_grad<T>(p, c, true), c.rctx.stream);
}
#endif

}  // namespace

void register_layer_norm_ops(OpRegistry& r) {
  r.add<LayerNormParam>("LayerNorm")
      .amp(AmpClass::kFloat32)
      .describe(
          "Layer normalization: each vector along `axis` minus its mean, divided by "
          "sqrt(biased variance + eps), times gamma plus beta. Hidden outputs mean and std (the "
          "axis kept as 1). mx also refuses a negative eps, which MXNet 1.9.1 accepts.")
      .inputs({"data", "gamma", "beta"})
      .outputs({"output", "mean", "std"})
      .visible_outputs([](const LayerNormParam& p) { return p.output_mean_var ? 3 : 1; })
      .infer_shape(infer_layer_norm)
      .backward_ignores_outputs({0})
      .resource(ResourceKind::kTempSpace)
      .flops([](const LayerNormParam&, const ShapeVector& in, const ShapeVector&) {
        return 8.0 * known_elements(in[0]);
      })
      .forward_cpu([](const LayerNormParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LayerNorm",
                      [&](auto tag) { layer_norm_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const LayerNormParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LayerNorm",
                      [&](auto tag) { layer_norm_backward<typename decltype(tag)::type>(p, c); });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const LayerNormParam& p, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, "LayerNorm", [&](auto tag) {
                   layer_norm_forward_gpu<typename decltype(tag)::type>(p, c);
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const LayerNormParam& p, const BackwardCall& c) {
                  dispatch_real(c.inputs[0].dtype, "LayerNorm", [&](auto tag) {
                    layer_norm_backward_gpu<typename decltype(tag)::type>(p, c);
                  });
                })
#endif
      ;
}

}  // namespace mx::op
