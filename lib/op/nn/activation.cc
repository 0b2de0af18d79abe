// Activation (act_type relu, sigmoid, tanh, softrelu, softsign): MXNet's
// activation layer, one element-wise function and its derivative (in
// activation_kernels.h, shared with the GPU kernels).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/activation_kernels.h"
#include "op/nn/activation_param.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#endif

namespace mx::op {
namespace {

// Calls fn with a functor returning t as a compile-time constant, so that
// each loop is specialised for one function (and the compiler vectorises
// the simple ones).
template <typename Fn>
void with_act_type(ActType t, Fn fn) {
  switch (t) {
    case ActType::kRelu: return fn([] { return ActType::kRelu; });
    case ActType::kSigmoid: return fn([] { return ActType::kSigmoid; });
    case ActType::kTanh: return fn([] { return ActType::kTanh; });
    case ActType::kSoftRelu: return fn([] { return ActType::kSoftRelu; });
    case ActType::kSoftSign: return fn([] { return ActType::kSoftSign; });
  }
}

// The vectorised float32 kernel of t, if it has one.
vmath::UnaryFn vector_kernel(ActType t) {
  switch (t) {
    case ActType::kSigmoid: return vmath::active().sigmoid;
    case ActType::kTanh: return vmath::active().tanh;
    case ActType::kSoftRelu: return vmath::active().softrelu;
    default: return nullptr;
  }
}

// ReLU's gradient, g * (y > 0 ? 1 : 0) as MXNet computes it; dst may be g.
// The select vectorises with -fno-trapping-math (CMakeLists.txt); without
// it GCC branched around the multiplication, 10x slower on random signs.
void relu_gradient(const float* g, const float* y, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = g[i] * (y[i] > 0.0f ? 1.0f : 0.0f);
}

// The CPU forward pass: the vectorised kernels (vmath) where the kind has
// one, blocks widened from bfloat16 for bfloat16 data, else element by element.
void activation_forward_cpu(const ActivationParam& p, const ForwardCall& c) {
  dispatch_real_bf16(c.inputs[0].dtype, "Activation", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = c.inputs[0].ptr<T>();
    T* y = c.outputs[0].ptr<T>();
    const int64_t n = c.outputs[0].size();
    if constexpr (std::is_same_v<T, float>) {
      if (vmath::UnaryFn f = vector_kernel(p.act_type)) {
        map_blocks(y, n, c.req[0],
                   [=](int64_t begin, int64_t len, float* dst) { f(x + begin, dst, len); });
        return;
      }
    }
    if constexpr (std::is_same_v<T, bf16_t>) {
      if (p.act_type == ActType::kRelu) {
        map_blocks_bf16(y, n, c.req[0], [=](int64_t begin, int64_t len, float* dst) {
          widen_block(x + begin, dst, len);
          for (int64_t i = 0; i < len; ++i) dst[i] = dst[i] > 0.0f ? dst[i] : 0.0f;
        });
        return;
      }
      // The float32 vector kernels on blocks widened from bfloat16.
      if (vmath::UnaryFn f = vector_kernel(p.act_type)) {
        map_blocks_bf16(y, n, c.req[0], [=](int64_t begin, int64_t len, float* dst) {
          widen_block(x + begin, dst, len);
          f(dst, dst, len);
        });
        return;
      }
    }
    with_act_type(p.act_type, [&](auto act) {
      map_index(y, n, c.req[0], [=](int64_t i) { return T(activate<ActCompute<T>>(act(), x[i])); });
    });
  });
}

// The CPU backward pass: ReLU's and softrelu's vectorised gradients (ReLU's
// on widened bfloat16 blocks too), else element by element from the output.
void activation_backward_cpu(const ActivationParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  dispatch_real_bf16(c.out_grads[0].dtype, "Activation", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* g = c.out_grads[0].ptr<T>();
    const T* y = c.outputs[0].ptr<T>();
    T* gx = c.in_grads[0].ptr<T>();
    const int64_t n = c.in_grads[0].size();
    if constexpr (std::is_same_v<T, float>) {
      if (p.act_type == ActType::kRelu) {
        map_blocks(gx, n, c.req[0], [=](int64_t b, int64_t len, float* dst) {
          relu_gradient(g + b, y + b, dst, len);
        });
        return;
      }
      if (p.act_type == ActType::kSoftRelu) {
        // -expm1(-y) in blocks; dst may be g itself, so it is written last.
        map_blocks(gx, n, c.req[0], [=](int64_t b, int64_t len, float* dst) {
          float e[kMapBlock];
          for (int64_t i = 0; i < len; ++i) e[i] = -y[b + i];
          vmath::expm1(e, e, len);
          for (int64_t i = 0; i < len; ++i) dst[i] = -e[i] * g[b + i];
        });
        return;
      }
    }
    if constexpr (std::is_same_v<T, bf16_t>) {
      if (p.act_type == ActType::kRelu) {
        map_blocks_bf16(gx, n, c.req[0], [=](int64_t b, int64_t len, float* dst) {
          float out[kMapBlock];
          widen_block(g + b, dst, len);
          widen_block(y + b, out, len);
          relu_gradient(dst, out, dst, len);
        });
        return;
      }
    }
    with_act_type(p.act_type, [&](auto act) {
      using C = ActCompute<T>;
      map_index(gx, n, c.req[0],
                [=](int64_t i) { return T(C(g[i]) * derivative<C>(act(), y[i])); });
    });
  });
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  r.add<ActivationParam>("Activation")
      .amp(
          [](const ActivationParam& p) {
            // MXNet's CONDITIONAL_FP32_FUNCS keep softrelu in float32.
            return p.act_type == ActType::kSoftRelu ? AmpClass::kFloat32 : AmpClass::kFollow;
          },
          "follow (softrelu: float32)")
      .describe("Applies an activation function element-wise.")
      .inputs({"data"})
      .infer_shape([](const ActivationParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .backward_uses(false, true)
      .backward_inplace()
      .inference_layer([](const ActivationParam& p, const ShapeVector& in,
                          const ShapeVector&) -> std::optional<InferenceLayer> {
        // Image data, or a FullyConnected layer's (batch, features).
        if (in[0].ndim() != 4 && in[0].ndim() != 2) return std::nullopt;
        InferenceLayer layer;
        if (!activation_kind(p.act_type).fusable) return std::nullopt;
        layer.kind = LayerKind::kActivation;
        layer.activation = p.act_type;
        return layer;
      })
      .forward_cpu(activation_forward_cpu)
      .backward_cpu(activation_backward_cpu)
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const ActivationParam& p, const ForwardCall& c) {
                 dispatch_real_amp(c.inputs[0].dtype, "Activation", [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   cuda::run_elements(c.outputs[0].size(), c.rctx.stream, "Activation",
                                      ActivationForward<T>{p.act_type, c.inputs[0].ptr<T>(),
                                                           c.outputs[0].ptr<T>(), c.req[0]});
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const ActivationParam& p, const BackwardCall& c) {
                  if (c.req[0] == OpReq::kNull) return;
                  dispatch_real_amp(c.out_grads[0].dtype, "Activation", [&](auto tag) {
                    using T = typename decltype(tag)::type;
                    cuda::run_elements(c.in_grads[0].size(), c.rctx.stream, "Activation",
                                       ActivationBackward<T>{p.act_type, c.out_grads[0].ptr<T>(),
                                                             c.outputs[0].ptr<T>(),
                                                             c.in_grads[0].ptr<T>(), c.req[0]});
                  });
                })
#endif
      ;
}

}  // namespace mx::op
