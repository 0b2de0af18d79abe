// BatchNorm with MXNet 1.x's semantics: training normalizes with the batch
// statistics (biased variance) and moves the moving statistics by
// `momentum`; inference (or use_global_stats) normalizes with the moving
// ones. fix_gamma (default True) uses a scale of 1 and gives gamma a zero
// gradient. The hidden outputs hold the mean and, as in MXNet, the inverse
// standard deviation 1/sqrt(var + eps) under the name 'var'.
//
// The GPU kernels (batch_norm_kernels.h, one block per channel) compute the
// same, with the same float64 sums.
//
// One difference: MXNet moves the moving statistics in the backward pass;
// here the training forward pass does it, so a forward-only training pass
// updates them too. After forward + backward the values are the same.
#include <cmath>
#include <type_traits>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/batch_norm_kernels.h"
#include "op/nn/batch_norm_param.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#endif

namespace mx::op {
namespace {

int channel_axis(const BatchNormParam& p, int ndim) {
  const int axis = p.axis < 0 ? p.axis + ndim : p.axis;
  if (axis < 0 || axis >= ndim)
    throw ShapeError(str("axis ", p.axis, " is out of range for ", ndim, "-D input 'data'"));
  return axis;
}

BatchNormView channel_view(const BatchNormParam& p, const Shape& s) {
  const int axis = channel_axis(p, s.ndim());
  return {s.prod(0, axis), s[axis], s.prod(axis + 1, s.ndim())};
}

void infer_batch_norm(const BatchNormParam& p, ShapeVector& in, ShapeVector& aux,
                      ShapeVector& out) {
  Shape& data = in[0];
  assign_shape(data, out[0], "input 'data' (from the output)");
  if (data.rank_known() && data.ndim() == 0)
    throw ShapeError("input 'data' must have at least 1 dimension");
  // The channel count from whichever of the per-channel arrays is known.
  Shape channels = Shape::filled(1, -1);
  const int axis = data.rank_known() ? channel_axis(p, data.ndim()) : -1;
  if (axis >= 0) channels[0] = data[axis];
  const char* names[] = {"input 'gamma'",
                         "input 'beta'",
                         "auxiliary state 'moving_mean'",
                         "auxiliary state 'moving_var'",
                         "output 'mean'",
                         "output 'var'"};
  Shape* vectors[] = {&in[1], &in[2], &aux[0], &aux[1], &out[1], &out[2]};
  for (int i = 0; i < 6; ++i) assign_shape(channels, *vectors[i], names[i]);
  for (int i = 0; i < 6; ++i) assign_shape(*vectors[i], channels, names[i]);
  if (axis >= 0 && data[axis] < 0 && channels[0] >= 0) {
    Shape c = Shape::filled(data.ndim(), -1);
    c[axis] = channels[0];
    assign_shape(data, c, "input 'data'");
  }
  assign_shape(out[0], data, "output");
}

template <typename T>
void batch_norm_forward(const BatchNormParam& p, const ForwardCall& c) {
  const BatchNormView v = channel_view(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const T* gamma = c.inputs[1].ptr<T>();
  const T* beta = c.inputs[2].ptr<T>();
  T* moving_mean = c.aux[0].ptr<T>();
  T* moving_var = c.aux[1].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  T* mean_out = c.outputs[1].ptr<T>();
  T* invstd_out = c.outputs[2].ptr<T>();
  const bool batch_stats = c.is_train && !p.use_global_stats;
  const int64_t count = v.outer * v.inner;
  const double momentum = p.momentum;

  parallel_for(
      v.channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t ch = begin; ch < end; ++ch) {
          auto each = [&](auto fn) {
            for (int64_t o = 0; o < v.outer; ++o) {
              const int64_t base = (o * v.channels + ch) * v.inner;
              for (int64_t i = 0; i < v.inner; ++i) fn(base + i);
            }
          };
          double mean, invstd;
          if (batch_stats) {
            double sum = 0;
            each([&](int64_t i) { sum += x[i]; });
            mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
            double sq = 0;
            each([&](int64_t i) { sq += (x[i] - mean) * (x[i] - mean); });
            const double var = count > 0 ? sq / static_cast<double>(count) : 0.0;
            // MXNet's guard: no division by zero for constant data and eps 0.
            invstd = (sq == 0 && p.eps == 0) ? 0.0 : 1.0 / std::sqrt(var + p.eps);
            moving_mean[ch] = static_cast<T>(moving_mean[ch] * momentum + mean * (1 - momentum));
            moving_var[ch] = static_cast<T>(moving_var[ch] * momentum + var * (1 - momentum));
          } else {
            mean = moving_mean[ch];
            invstd = 1.0 / std::sqrt(static_cast<double>(moving_var[ch]) + p.eps);
          }
          if (c.req[1] != OpReq::kNull) mean_out[ch] = static_cast<T>(mean);
          if (c.req[2] != OpReq::kNull) invstd_out[ch] = static_cast<T>(invstd);
          const T scale = static_cast<T>(invstd * (p.fix_gamma ? 1.0 : gamma[ch]));
          const T shift = static_cast<T>(beta[ch] - mean * static_cast<double>(scale));
          if (c.req[0] != OpReq::kNull)
            each([&](int64_t i) { assign(y + i, c.req[0], x[i] * scale + shift); });
        }
      });
}

template <typename T>
void batch_norm_backward(const BatchNormParam& p, const BackwardCall& c) {
  const BatchNormView v = channel_view(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const T* gamma = c.inputs[1].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  const T* saved_mean = c.outputs[1].ptr<T>();
  const T* saved_invstd = c.outputs[2].ptr<T>();
  const T* moving_mean = c.aux[0].ptr<T>();
  const T* moving_var = c.aux[1].ptr<T>();
  // Gradients that are not requested may be absent arrays.
  auto grad = [&](size_t i) { return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>(); };
  T* dx = grad(0);
  T* dgamma = grad(1);
  T* dbeta = grad(2);
  const bool batch_stats = c.is_train && !p.use_global_stats;
  const int64_t count = v.outer * v.inner;

  parallel_for(v.channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t ch = begin; ch < end; ++ch) {
                   auto each = [&](auto fn) {
                     for (int64_t o = 0; o < v.outer; ++o) {
                       const int64_t base = (o * v.channels + ch) * v.inner;
                       for (int64_t i = 0; i < v.inner; ++i) fn(base + i);
                     }
                   };
                   const double w = p.fix_gamma ? 1.0 : static_cast<double>(gamma[ch]);
                   double mean, invstd;
                   if (batch_stats) {
                     mean = saved_mean[ch];
                     invstd = saved_invstd[ch];
                   } else {
                     mean = moving_mean[ch];
                     invstd = 1.0 / std::sqrt(static_cast<double>(moving_var[ch]) + p.eps);
                   }
                   double sum_dy = 0, dot = 0;
                   each([&](int64_t i) {
                     sum_dy += dy[i];
                     dot += (x[i] - mean) * dy[i];
                   });
                   if (c.req[0] != OpReq::kNull) {
                     if (batch_stats && count > 0) {
                       // Through the batch statistics: remove the components of dy
                       // along the mean and along the normalized data.
                       const double n = static_cast<double>(count);
                       const double k = dot * invstd * invstd / n, mean_dy = sum_dy / n;
                       const double iw = invstd * w;
                       each([&](int64_t i) {
                         assign(dx + i, c.req[0],
                                static_cast<T>((dy[i] - mean_dy - (x[i] - mean) * k) * iw));
                       });
                     } else {
                       const T iw = static_cast<T>(invstd * w);
                       each([&](int64_t i) { assign(dx + i, c.req[0], dy[i] * iw); });
                     }
                   }
                   assign(dgamma + ch, c.req[1], static_cast<T>(p.fix_gamma ? 0.0 : dot * invstd));
                   assign(dbeta + ch, c.req[2], static_cast<T>(sum_dy));
                 }
               });
}

#if MX_USE_CUDA
template <typename T>
void batch_norm_forward_gpu(const BatchNormParam& p, const ForwardCall& c) {
  const BatchNormView view = channel_view(p, c.inputs[0].shape);
  cuda::batch_norm_forward(
      BatchNormForwardChannel<T>{
          view, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), c.inputs[2].ptr<T>(), c.aux[0].ptr<T>(),
          c.aux[1].ptr<T>(), c.outputs[0].ptr<T>(), c.outputs[1].ptr<T>(), c.outputs[2].ptr<T>(),
          c.req[0], c.req[1], c.req[2], p.eps, static_cast<double>(p.momentum), p.fix_gamma,
          c.is_train && !p.use_global_stats},
      c.resources.temp_space(cuda::batch_norm_workspace_bytes(view)), c.rctx.stream);
}

template <typename T>
void batch_norm_backward_gpu(const BatchNormParam& p, const BackwardCall& c) {
  auto grad = [&](size_t i) { return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>(); };
  const BatchNormView view = channel_view(p, c.inputs[0].shape);
  cuda::batch_norm_backward(
      BatchNormBackwardChannel<T>{view, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(),
                                  c.out_grads[0].ptr<T>(), c.outputs[1].ptr<T>(),
                                  c.outputs[2].ptr<T>(), c.aux[0].ptr<T>(), c.aux[1].ptr<T>(),
                                  grad(0), grad(1), grad(2), c.req[0], c.req[1], c.req[2], p.eps,
                                  p.fix_gamma, c.is_train && !p.use_global_stats},
      c.resources.temp_space(cuda::batch_norm_workspace_bytes(view)), c.rctx.stream);
}
#endif

}  // namespace

void register_batch_norm_ops(OpRegistry& r) {
  r.add<BatchNormParam>("BatchNorm")
      .amp(AmpClass::kFloat32)
      .describe("Batch normalization over all axes but the channel axis, with moving statistics.")
      .inputs({"data", "gamma", "beta"})
      .aux({"moving_mean", "moving_var"})
      .outputs({"output", "mean", "var"})
      .visible_outputs([](const BatchNormParam& p) { return p.output_mean_var ? 3 : 1; })
      .infer_shape(infer_batch_norm)
      .backward_ignores_outputs({0})
      .resource(ResourceKind::kTempSpace)  // the GPU kernels' per-part sums
      .inference_layer([](const BatchNormParam& p, const ShapeVector& in,
                          const ShapeVector&) -> std::optional<InferenceLayer> {
        if (in[0].ndim() != 4 || channel_axis(p, 4) != 1) return std::nullopt;
        InferenceLayer layer;
        layer.kind = LayerKind::kBatchNorm;
        layer.bn_eps = p.eps;
        layer.bn_fix_gamma = p.fix_gamma;
        return layer;
      })
      .forward_cpu([](const BatchNormParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "BatchNorm",
                      [&](auto tag) { batch_norm_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const BatchNormParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "BatchNorm",
                      [&](auto tag) { batch_norm_backward<typename decltype(tag)::type>(p, c); });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const BatchNormParam& p, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, "BatchNorm", [&](auto tag) {
                   batch_norm_forward_gpu<typename decltype(tag)::type>(p, c);
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const BatchNormParam& p, const BackwardCall& c) {
                  dispatch_real(c.inputs[0].dtype, "BatchNorm", [&](auto tag) {
                    batch_norm_backward_gpu<typename decltype(tag)::type>(p, c);
                  });
                })
#endif
      ;
}

}  // namespace mx::op
