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
#include <algorithm>
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

// The per-channel arrays (inputs 1-2, the auxiliary states, outputs 1-2),
// in the order the inference functions list them.
constexpr const char* kChannelArrays[] = {"input 'gamma'",
                                          "input 'beta'",
                                          "auxiliary state 'moving_mean'",
                                          "auxiliary state 'moving_var'",
                                          "output 'mean'",
                                          "output 'var'"};

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
  Shape* vectors[] = {&in[1], &in[2], &aux[0], &aux[1], &out[1], &out[2]};
  for (int i = 0; i < 6; ++i) assign_shape(channels, *vectors[i], kChannelArrays[i]);
  for (int i = 0; i < 6; ++i) assign_shape(*vectors[i], channels, kChannelArrays[i]);
  if (axis >= 0 && data[axis] < 0 && channels[0] >= 0) {
    Shape c = Shape::filled(data.ndim(), -1);
    c[axis] = channels[0];
    assign_shape(data, c, "input 'data'");
  }
  assign_shape(out[0], data, "output");
}

// One channel's elements, block by block as P values: bfloat16 data is
// widened to float a block at a time (vectorised), other data read as it is.
template <typename T, typename P>
class ChannelBlocks {
 public:
  ChannelBlocks(const BatchNormView& v, int64_t channel) : v_(v), channel_(channel) {}

  // fn(a's values, the block's first index, its length) for each block.
  template <typename Fn>
  void each(Fn fn, const T* a) const {
    P buffer[kBuffer];
    blocks([&](int64_t at, int64_t len) { fn(values(a + at, buffer, len), at, len); });
  }
  // fn(a's values, b's values, the block's first index, its length).
  template <typename Fn>
  void each(Fn fn, const T* a, const T* b) const {
    P buffer_a[kBuffer], buffer_b[kBuffer];
    blocks([&](int64_t at, int64_t len) {
      fn(values(a + at, buffer_a, len), values(b + at, buffer_b, len), at, len);
    });
  }

  // out[at + i] (req) values[i], rounded once to T.
  static void store(T* out, OpReq req, const P* values, int64_t len) {
    if constexpr (std::is_same_v<T, P>) {
      for (int64_t i = 0; i < len; ++i) assign(out + i, req, values[i]);
    } else {
      float sum[kMapBlock];
      const float* result = values;
      if (req == OpReq::kAdd) {
        widen_block(out, sum, len);
        for (int64_t i = 0; i < len; ++i) sum[i] += values[i];
        result = sum;
      }
      if (req != OpReq::kNull) round_block(result, out, len);
    }
  }

 private:
  static constexpr int64_t kBuffer = std::is_same_v<T, P> ? 1 : kMapBlock;

  template <typename Fn>
  void blocks(Fn fn) const {
    for (int64_t o = 0; o < v_.outer; ++o) {
      const int64_t base = (o * v_.channels + channel_) * v_.inner;
      for (int64_t b = 0; b < v_.inner; b += kMapBlock)
        fn(base + b, std::min(kMapBlock, v_.inner - b));
    }
  }

  static const P* values(const T* src, P* buffer, int64_t len) {
    if constexpr (std::is_same_v<T, P>) {
      return src;
    } else {
      widen_block(src, buffer, len);
      return buffer;
    }
  }

  BatchNormView v_;
  int64_t channel_;
};

// The data and the output in one type; gamma, beta, the moving statistics
// and the mean/var outputs in float32 when the data is bfloat16 or float16
// (as MXNet's BatchNormType does), else in the data's type.
void infer_batch_norm_type(DTypeVector& in, DTypeVector& aux, DTypeVector& out) {
  std::optional<DType> data;
  assign_type(data, in[0], "input 'data'");
  assign_type(data, out[0], "output");
  if (!data) return;
  in[0] = out[0] = data;
  const bool low = *data == DType::kBFloat16 || *data == DType::kFloat16;
  const std::optional<DType> params = low ? DType::kFloat32 : *data;
  std::optional<DType>* types[] = {&in[1], &in[2], &aux[0], &aux[1], &out[1], &out[2]};
  for (int i = 0; i < 6; ++i) {
    std::optional<DType> t = params;
    assign_type(t, *types[i], kChannelArrays[i]);
    *types[i] = params;
  }
}

// T: the data's type; P: the parameters' and statistics' (float32 for
// bfloat16 data).
template <typename T, typename P = T>
void batch_norm_forward(const BatchNormParam& p, const ForwardCall& c) {
  const BatchNormView v = channel_view(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const P* gamma = c.inputs[1].ptr<P>();
  const P* beta = c.inputs[2].ptr<P>();
  P* moving_mean = c.aux[0].ptr<P>();
  P* moving_var = c.aux[1].ptr<P>();
  T* y = c.outputs[0].ptr<T>();
  P* mean_out = c.outputs[1].ptr<P>();
  P* invstd_out = c.outputs[2].ptr<P>();
  const bool batch_stats = c.is_train && !p.use_global_stats;
  const int64_t count = v.outer * v.inner;
  const double momentum = p.momentum;

  parallel_for(
      v.channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t ch = begin; ch < end; ++ch) {
          const ChannelBlocks<T, P> blocks(v, ch);
          double mean, invstd;
          if (batch_stats) {
            double sum = 0;
            blocks.each(
                [&](const P* xs, int64_t, int64_t len) {
                  double block = 0;  // a local: a captured sum would stay in memory
                  for (int64_t i = 0; i < len; ++i) block += xs[i];
                  sum += block;
                },
                x);
            mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
            double sq = 0;
            blocks.each(
                [&](const P* xs, int64_t, int64_t len) {
                  double block = 0;
                  for (int64_t i = 0; i < len; ++i) block += (xs[i] - mean) * (xs[i] - mean);
                  sq += block;
                },
                x);
            const double var = count > 0 ? sq / static_cast<double>(count) : 0.0;
            // MXNet's guard: no division by zero for constant data and eps 0.
            invstd = (sq == 0 && p.eps == 0) ? 0.0 : 1.0 / std::sqrt(var + p.eps);
            moving_mean[ch] = static_cast<P>(moving_mean[ch] * momentum + mean * (1 - momentum));
            moving_var[ch] = static_cast<P>(moving_var[ch] * momentum + var * (1 - momentum));
          } else {
            mean = moving_mean[ch];
            invstd = 1.0 / std::sqrt(static_cast<double>(moving_var[ch]) + p.eps);
          }
          if (c.req[1] != OpReq::kNull) mean_out[ch] = static_cast<P>(mean);
          if (c.req[2] != OpReq::kNull) invstd_out[ch] = static_cast<P>(invstd);
          const P scale = static_cast<P>(invstd * (p.fix_gamma ? 1.0 : gamma[ch]));
          const P shift = static_cast<P>(beta[ch] - mean * static_cast<double>(scale));
          if (c.req[0] == OpReq::kNull) continue;
          blocks.each(
              [&](const P* xs, int64_t at, int64_t len) {
                P out[kMapBlock];
                for (int64_t i = 0; i < len; ++i) out[i] = xs[i] * scale + shift;
                ChannelBlocks<T, P>::store(y + at, c.req[0], out, len);
              },
              x);
        }
      });
}

template <typename T, typename P = T>
void batch_norm_backward(const BatchNormParam& p, const BackwardCall& c) {
  const BatchNormView v = channel_view(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const P* gamma = c.inputs[1].ptr<P>();
  const T* dy = c.out_grads[0].ptr<T>();
  const P* saved_mean = c.outputs[1].ptr<P>();
  const P* saved_invstd = c.outputs[2].ptr<P>();
  const P* moving_mean = c.aux[0].ptr<P>();
  const P* moving_var = c.aux[1].ptr<P>();
  // Gradients that are not requested may be absent arrays.
  T* dx = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  P* dgamma = c.req[1] == OpReq::kNull ? nullptr : c.in_grads[1].ptr<P>();
  P* dbeta = c.req[2] == OpReq::kNull ? nullptr : c.in_grads[2].ptr<P>();
  const bool batch_stats = c.is_train && !p.use_global_stats;
  const int64_t count = v.outer * v.inner;

  parallel_for(v.channels, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t ch = begin; ch < end; ++ch) {
                   const ChannelBlocks<T, P> blocks(v, ch);
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
                   blocks.each(
                       [&](const P* xs, const P* gs, int64_t, int64_t len) {
                         double block_sum = 0, block_dot = 0;  // locals, in registers
                         for (int64_t i = 0; i < len; ++i) {
                           block_sum += gs[i];
                           block_dot += (xs[i] - mean) * gs[i];
                         }
                         sum_dy += block_sum;
                         dot += block_dot;
                       },
                       x, dy);
                   if (c.req[0] != OpReq::kNull) {
                     if (batch_stats && count > 0) {
                       // Through the batch statistics: remove the components of dy
                       // along the mean and along the normalized data.
                       const double n = static_cast<double>(count);
                       const double k = dot * invstd * invstd / n, mean_dy = sum_dy / n;
                       const double iw = invstd * w;
                       blocks.each(
                           [&](const P* xs, const P* gs, int64_t at, int64_t len) {
                             P out[kMapBlock];
                             for (int64_t i = 0; i < len; ++i)
                               out[i] = static_cast<P>((gs[i] - mean_dy - (xs[i] - mean) * k) * iw);
                             ChannelBlocks<T, P>::store(dx + at, c.req[0], out, len);
                           },
                           x, dy);
                     } else {
                       const P iw = static_cast<P>(invstd * w);
                       blocks.each(
                           [&](const P* gs, int64_t at, int64_t len) {
                             P out[kMapBlock];
                             for (int64_t i = 0; i < len; ++i) out[i] = gs[i] * iw;
                             ChannelBlocks<T, P>::store(dx + at, c.req[0], out, len);
                           },
                           dy);
                     }
                   }
                   assign(dgamma + ch, c.req[1], static_cast<P>(p.fix_gamma ? 0.0 : dot * invstd));
                   assign(dbeta + ch, c.req[2], static_cast<P>(sum_dy));
                 }
               });
}

#if MX_USE_CUDA
// The parameters' type for data of type T: float32 for 16-bit float data.
template <typename T>
using ParamType = std::conditional_t<is_half_like_v<T>, float, T>;

// T: the data's type; P: the parameters' (float32 for float16 and bfloat16 data).
template <typename T, typename P>
void batch_norm_forward_gpu(const BatchNormParam& p, const ForwardCall& c) {
  const BatchNormView view = channel_view(p, c.inputs[0].shape);
  cuda::batch_norm_forward(
      BatchNormForwardChannel<T, P>{
          view, c.inputs[0].ptr<T>(), c.inputs[1].ptr<P>(), c.inputs[2].ptr<P>(), c.aux[0].ptr<P>(),
          c.aux[1].ptr<P>(), c.outputs[0].ptr<T>(), c.outputs[1].ptr<P>(), c.outputs[2].ptr<P>(),
          c.req[0], c.req[1], c.req[2], p.eps, static_cast<double>(p.momentum), p.fix_gamma,
          c.is_train && !p.use_global_stats},
      c.resources.temp_space(cuda::batch_norm_workspace_bytes(view)), c.rctx.stream);
}

template <typename T, typename P>
void batch_norm_backward_gpu(const BatchNormParam& p, const BackwardCall& c) {
  auto grad = [&](size_t i, auto* type) {
    using V = std::remove_pointer_t<decltype(type)>;
    return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<V>();
  };
  const BatchNormView view = channel_view(p, c.inputs[0].shape);
  cuda::batch_norm_backward(
      BatchNormBackwardChannel<T, P>{
          view, c.inputs[0].ptr<T>(), c.inputs[1].ptr<P>(), c.out_grads[0].ptr<T>(),
          c.outputs[1].ptr<P>(), c.outputs[2].ptr<P>(), c.aux[0].ptr<P>(), c.aux[1].ptr<P>(),
          grad(0, static_cast<T*>(nullptr)), grad(1, static_cast<P*>(nullptr)),
          grad(2, static_cast<P*>(nullptr)), c.req[0], c.req[1], c.req[2], p.eps, p.fix_gamma,
          c.is_train && !p.use_global_stats},
      c.resources.temp_space(cuda::batch_norm_workspace_bytes(view)), c.rctx.stream);
}
#endif

}  // namespace

void register_batch_norm_ops(OpRegistry& r) {
  r.add<BatchNormParam>("BatchNorm")
      .amp(AmpClass::kFollowData)
      .describe("Batch normalization over all axes but the channel axis, with moving statistics.")
      .inputs({"data", "gamma", "beta"})
      .aux({"moving_mean", "moving_var"})
      .outputs({"output", "mean", "var"})
      .visible_outputs([](const BatchNormParam& p) { return p.output_mean_var ? 3 : 1; })
      .infer_shape(infer_batch_norm)
      .infer_type([](const BatchNormParam&, DTypeVector& in, DTypeVector& aux, DTypeVector& out) {
        infer_batch_norm_type(in, aux, out);
      })
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
        if (c.inputs[0].dtype == DType::kBFloat16) return batch_norm_forward<bf16_t, float>(p, c);
        dispatch_real(c.inputs[0].dtype, "BatchNorm",
                      [&](auto tag) { batch_norm_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const BatchNormParam& p, const BackwardCall& c) {
        if (c.inputs[0].dtype == DType::kBFloat16) return batch_norm_backward<bf16_t, float>(p, c);
        dispatch_real(c.inputs[0].dtype, "BatchNorm",
                      [&](auto tag) { batch_norm_backward<typename decltype(tag)::type>(p, c); });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const BatchNormParam& p, const ForwardCall& c) {
                 dispatch_real_amp(c.inputs[0].dtype, "BatchNorm", [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   batch_norm_forward_gpu<T, ParamType<T>>(p, c);
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const BatchNormParam& p, const BackwardCall& c) {
                  dispatch_real_amp(c.inputs[0].dtype, "BatchNorm", [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    batch_norm_backward_gpu<T, ParamType<T>>(p, c);
                  });
                })
#endif
      ;
}

}  // namespace mx::op
