// Dropout: in training (or always, with mode='always') each element (or
// each slice along `axes`, which share one draw) is kept with probability
// 1 - p and scaled by 1 / (1 - p). The hidden output 'mask' holds the scale
// of every element (0 or 1 / (1 - p); 1 when dropout is off), so the
// backward pass is dy * mask. Each call draws one seed from the RNG
// resource, so a seeded run is reproducible; the mask follows from the seed
// and each element's index alone (vmath/dropout_bits.h), so the CPU threads
// draw their parts in parallel, and float32 draws and applies it in one
// vectorised pass. On a GPU the mask is drawn with Philox from the seed
// (dropout_kernels.h): other masks than the CPU's.
#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/vmath/dropout_bits.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#include "op/nn/dropout_kernels.h"
#endif

namespace mx::op {
namespace {

enum class DropoutMode { kTraining, kAlways };

struct DropoutParam : Params<DropoutParam> {
  float p = 0.5f;
  DropoutMode mode = DropoutMode::kTraining;
  Shape axes;
  std::optional<bool> cudnn_off;

  static void declare(ParamDecl<DropoutParam>& d) {
    d.field("p", &DropoutParam::p)
        .set_default(0.5f)
        .set_range(0.0f, 1.0f)
        .describe("Fraction of the input that is dropped in training.");
    d.field("mode", &DropoutParam::mode)
        .set_default(DropoutMode::kTraining)
        .add_enum("training", DropoutMode::kTraining)
        .add_enum("always", DropoutMode::kAlways)
        .describe("'training': only in training; 'always': also at inference.");
    d.field("axes", &DropoutParam::axes)
        .set_default(Shape::scalar())
        .describe("Axes along which one draw is shared (variational dropout).");
    d.field("cudnn_off", &DropoutParam::cudnn_off)
        .set_default(false)
        .describe("Turn off cuDNN (accepted for compatibility; the CPU ignores it).");
  }
};

// The mask's shape: the data's with every axis in `axes` set to 1.
Shape mask_shape(const DropoutParam& p, const Shape& data) {
  Shape m = data;
  for (int i = 0; i < p.axes.ndim(); ++i) {
    const int64_t a = p.axes[i] < 0 ? p.axes[i] + data.ndim() : p.axes[i];
    if (a < 0 || a >= data.ndim())
      throw ShapeError(
          str("axes ", p.axes.to_string(), " out of range for input 'data' ", data.to_string()));
    m[static_cast<int>(a)] = 1;
  }
  return m;
}

void infer_dropout(const DropoutParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  assign_shape(in[0], out[0], "input 'data' (from the output)");
  assign_shape(out[0], in[0], "output");
  if (in[0].rank_known()) assign_shape(out[1], mask_shape(p, in[0]), "output 'mask'");
}

// Calls fn(i, m) for every data index i with m its mask index (the mask is
// broadcast along the dims where it has size 1).
template <typename Fn>
void for_each_broadcast(const Shape& data, const Shape& mask, Fn fn) {
  const int nd = data.ndim();
  if (data == mask) {
    for (int64_t i = 0; i < data.size(); ++i) fn(i, i);
    return;
  }
  std::vector<int64_t> mask_stride(static_cast<size_t>(nd), 0), index(static_cast<size_t>(nd), 0);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; --d) {
    mask_stride[static_cast<size_t>(d)] = mask[d] == 1 ? 0 : s;
    s *= mask[d];
  }
  int64_t m = 0;
  const int64_t n = data.size();
  for (int64_t i = 0; i < n; ++i) {
    fn(i, m);
    // Odometer step over the data's index, tracking the mask offset.
    for (int d = nd - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      if (++index[k] < data[d]) {
        m += mask_stride[k];
        break;
      }
      m -= mask_stride[k] * (data[d] - 1);
      index[k] = 0;
    }
  }
}

// The keep probability as a threshold on 32 random bits.
uint32_t keep_threshold(double keep) {
  return static_cast<uint32_t>(std::min(std::ldexp(keep, 32), 4294967295.0));
}

// mask[i] = scale where element i is kept, else 0 (any element type).
template <typename T>
void draw_mask(T* mask, int64_t size, uint64_t seed, double keep, T scale) {
  const uint32_t threshold = keep_threshold(keep);
  parallel_for(size, kParallelGrain, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      mask[i] = vmath::dropout_keeps(static_cast<uint64_t>(i), seed, threshold) ? scale : T(0);
  });
}

template <typename T>
void dropout_forward(const DropoutParam& p, const ForwardCall& c) {
  const TensorRef& data = c.inputs[0];
  const T* x = data.ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  T* mask = c.outputs[1].ptr<T>();
  const int64_t mask_size = c.outputs[1].size();
  const bool active = (c.is_train || p.mode == DropoutMode::kAlways) && p.p > 0;
  if (!active) {
    std::fill(mask, mask + mask_size, T(1));
    map_index(y, data.size(), c.req[0], [=](int64_t i) { return x[i]; });
    return;
  }
  const double keep = 1.0 - static_cast<double>(p.p);
  const T scale = keep > 0 ? static_cast<T>(1.0 / keep) : T(0);
  const uint64_t seed = c.resources.rng()();
  const bool same_shape = data.shape == c.outputs[1].shape;
  if constexpr (std::is_same_v<T, float>) {
    // Drawn and applied in one pass where the output is written, not added to.
    const bool apply = same_shape && (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace);
    const vmath::Kernels& k = vmath::active();
    const uint32_t threshold = keep_threshold(keep);
    parallel_for(mask_size, kParallelGrain, [=, &k](int64_t begin, int64_t end) {
      k.dropout(apply ? x + begin : nullptr, y + begin, mask + begin, end - begin,
                static_cast<uint64_t>(begin), seed, threshold, scale);
    });
    if (apply) return;
  } else {
    draw_mask(mask, mask_size, seed, keep, scale);
  }
  if (same_shape) {
    map_index(y, data.size(), c.req[0], [=](int64_t i) { return x[i] * mask[i]; });
  } else {
    for_each_broadcast(data.shape, c.outputs[1].shape,
                       [&](int64_t i, int64_t m) { assign(y + i, c.req[0], x[i] * mask[m]); });
  }
}

template <typename T>
void dropout_backward(const DropoutParam&, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const T* dy = c.out_grads[0].ptr<T>();
  const T* mask = c.outputs[1].ptr<T>();
  T* dx = c.in_grads[0].ptr<T>();
  const Shape& shape = c.out_grads[0].shape;
  if (shape == c.outputs[1].shape) {
    map_index(dx, shape.size(), c.req[0], [=](int64_t i) { return dy[i] * mask[i]; });
  } else {
    for_each_broadcast(shape, c.outputs[1].shape,
                       [&](int64_t i, int64_t m) { assign(dx + i, c.req[0], dy[i] * mask[m]); });
  }
}

#if MX_USE_CUDA
template <typename T>
void dropout_forward_gpu(const DropoutParam& p, const ForwardCall& c) {
  const TensorRef& data = c.inputs[0];
  T* mask = c.outputs[1].ptr<T>();
  const int64_t mask_size = c.outputs[1].size();
  const bool active = (c.is_train || p.mode == DropoutMode::kAlways) && p.p > 0;
  if (!active) {
    cuda::run_elements(mask_size, c.rctx.stream, "Dropout", DropoutMaskOnes<T>{mask});
  } else {
    const double keep = 1.0 - static_cast<double>(p.p);
    const T scale = keep > 0 ? static_cast<T>(1.0 / keep) : T(0);
    const uint64_t seed = c.resources.rng()();
    cuda::run_elements(mask_size, c.rctx.stream, "Dropout",
                       DropoutMaskDraw<T>{mask, seed, keep, scale});
  }
  cuda::run_elements(data.size(), c.rctx.stream, "Dropout",
                     DropoutApply<T>{data.ptr<T>(), mask, c.outputs[0].ptr<T>(),
                                     dropout_mask_index(data.shape, c.outputs[1].shape), c.req[0]});
}

template <typename T>
void dropout_backward_gpu(const DropoutParam&, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const Shape& shape = c.out_grads[0].shape;
  cuda::run_elements(
      shape.size(), c.rctx.stream, "Dropout",
      DropoutApply<T>{c.out_grads[0].ptr<T>(), c.outputs[1].ptr<T>(), c.in_grads[0].ptr<T>(),
                      dropout_mask_index(shape, c.outputs[1].shape), c.req[0]});
}
#endif

}  // namespace

void register_dropout_ops(OpRegistry& r) {
  r.add<DropoutParam>("Dropout")
      .amp(AmpClass::kFloat32)
      .describe("Randomly zeroes elements with probability p in training and rescales the rest.")
      .inputs({"data"})
      .outputs({"output", "mask"})
      .visible_outputs([](const DropoutParam&) { return 1; })
      .infer_shape(infer_dropout)
      .inplace({{0, 0}})
      .resource(ResourceKind::kRandom)
      .backward_uses(false, true)
      .backward_ignores_outputs({0})
      .backward_inplace()
      .forward_cpu([](const DropoutParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "Dropout",
                      [&](auto tag) { dropout_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const DropoutParam& p, const BackwardCall& c) {
        dispatch_real(c.out_grads[0].dtype, "Dropout",
                      [&](auto tag) { dropout_backward<typename decltype(tag)::type>(p, c); });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const DropoutParam& p, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, "Dropout", [&](auto tag) {
                   dropout_forward_gpu<typename decltype(tag)::type>(p, c);
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const DropoutParam& p, const BackwardCall& c) {
                  dispatch_real(c.out_grads[0].dtype, "Dropout", [&](auto tag) {
                    dropout_backward_gpu<typename decltype(tag)::type>(p, c);
                  });
                })
#endif
      ;
}

}  // namespace mx::op
