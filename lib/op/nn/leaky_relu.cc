// LeakyReLU and its relatives, MXNet's act_type values:
//   leaky  x > 0 ? x : slope * x
//   prelu  x > 0 ? x : gamma[c] * x, gamma learned per channel (axis 1) or shared
//   elu    x > 0 ? x : slope * (exp(x) - 1)
//   selu   lambda * (x > 0 ? x : alpha * (exp(x) - 1)), the self-normalizing constants
//   gelu   x * Phi(x) with the exact normal CDF (erf), as MXNet 1.9 computes it
// (the scalar functions and the kernels' functors: leaky_relu_kernels.h).
// rrelu (random slopes in training) is rejected with a message.
#include <cmath>
#include <numbers>
#include <type_traits>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/leaky_relu_kernels.h"
#include "op/nn/leaky_relu_param.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#endif

namespace mx::op {
namespace {

std::vector<std::string> input_names(const LeakyReLUParam& p) {
  if (p.act_type == LeakyType::kPRelu) return {"data", "gamma"};
  return {"data"};
}

void infer_leaky_relu(const LeakyReLUParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  assign_shape(in[0], out[0], "input 'data' (from the output)");
  assign_shape(out[0], in[0], "output");
  if (p.act_type != LeakyType::kPRelu || !in[0].rank_known()) return;
  const Shape& data = in[0];
  if (data.ndim() < 2)
    throw ShapeError("prelu needs input 'data' with a channel axis (at least 2-D), not " +
                     data.to_string());
  Shape& gamma = in[1];
  if (!gamma.rank_known()) {
    gamma = Shape{data[1]};
  } else if (!(gamma.ndim() == 1 && (gamma[0] == 1 || data[1] < 0))) {
    assign_shape(gamma, Shape{data[1]}, "input 'gamma'");
  }
}

PreluChannel channel_map(const Shape& data, const Shape& gamma) {
  return {gamma.size() == 1 ? 1 : data[1], data.prod(2, data.ndim())};
}

// float32 leaky, elu, selu and gelu in loops that vectorise (the last three
// in blocks with vmath's expm1, exp and GELU kernels); false for the other
// types (which map_index computes per element).
// dst may be x or dy itself: each element is read before it is written.
bool vector_forward(LeakyType t, float slope, const float* x, float* y, int64_t n, OpReq req) {
  const vmath::Kernels& k = vmath::active();
  const float lambda = static_cast<float>(kSeluLambda), alpha = static_cast<float>(kSeluAlpha);
  switch (t) {
    case LeakyType::kElu:
    case LeakyType::kSelu: {
      const float scale = t == LeakyType::kElu ? 1.0f : lambda;
      const float neg = t == LeakyType::kElu ? slope : lambda * alpha;
      map_blocks(y, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float e[kMapBlock];
        k.expm1(x + begin, e, len);
        for (int64_t i = 0; i < len; ++i) {
          // e[i] read on both sides: the select then vectorises (with
          // -fno-trapping-math, CMakeLists.txt) instead of branching.
          const float v = x[begin + i], ev = e[i];
          dst[i] = v > 0.0f ? scale * v : neg * ev;
        }
      });
      return true;
    }
    case LeakyType::kGelu:
      map_blocks(y, n, req,
                 [=, &k](int64_t begin, int64_t len, float* dst) { k.gelu(x + begin, dst, len); });
      return true;
    case LeakyType::kLeaky:
      map_index(y, n, req, [=](int64_t i) { return x[i] > 0.0f ? x[i] : slope * x[i]; });
      return true;
    default: return false;
  }
}

bool vector_backward(LeakyType t, float slope, const float* x, const float* dy, float* dx,
                     int64_t n, OpReq req) {
  const vmath::Kernels& k = vmath::active();
  const float lambda = static_cast<float>(kSeluLambda), alpha = static_cast<float>(kSeluAlpha);
  switch (t) {
    case LeakyType::kElu:
    case LeakyType::kSelu: {
      const float scale = t == LeakyType::kElu ? 1.0f : lambda;
      const float neg = t == LeakyType::kElu ? slope : lambda * alpha;
      map_blocks(dx, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        float e[kMapBlock];
        k.exp(x + begin, e, len);
        for (int64_t i = 0; i < len; ++i) {
          const float ev = e[i];  // read on both sides, as in the forward pass
          dst[i] = dy[begin + i] * (x[begin + i] > 0.0f ? scale : neg * ev);
        }
      });
      return true;
    }
    case LeakyType::kGelu:
      map_blocks(dx, n, req, [=, &k](int64_t begin, int64_t len, float* dst) {
        k.gelu_backward(x + begin, dy + begin, dst, len);
      });
      return true;
    case LeakyType::kLeaky:
      map_index(dx, n, req, [=](int64_t i) { return dy[i] * (x[i] > 0.0f ? 1.0f : slope); });
      return true;
    default: return false;
  }
}

template <typename T>
void leaky_forward(const LeakyReLUParam& p, const ForwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  if (p.act_type == LeakyType::kPRelu) {
    const T* gamma = c.inputs[1].ptr<T>();
    const PreluChannel ch = channel_map(c.inputs[0].shape, c.inputs[1].shape);
    map_index(y, n, c.req[0], [=](int64_t i) { return x[i] > T(0) ? x[i] : gamma[ch(i)] * x[i]; });
    return;
  }
  const LeakyType t = p.act_type;
  const T slope = static_cast<T>(p.slope);
  if constexpr (std::is_same_v<T, float>)
    if (vector_forward(t, slope, x, y, n, c.req[0])) return;
  map_index(y, n, c.req[0], [=](int64_t i) { return leaky_value(t, slope, x[i]); });
}

template <typename T>
void leaky_backward(const LeakyReLUParam& p, const BackwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  // The data gradient may be absent when it is not requested.
  T* dx = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  if (p.act_type != LeakyType::kPRelu) {
    const LeakyType t = p.act_type;
    const T slope = static_cast<T>(p.slope);
    if constexpr (std::is_same_v<T, float>)
      if (c.req[0] == OpReq::kNull || vector_backward(t, slope, x, dy, dx, n, c.req[0])) return;
    map_index(dx, n, c.req[0], [=](int64_t i) { return dy[i] * leaky_derivative(t, slope, x[i]); });
    return;
  }
  const T* gamma = c.inputs[1].ptr<T>();
  const PreluChannel ch = channel_map(c.inputs[0].shape, c.inputs[1].shape);
  map_index(dx, n, c.req[0], [=](int64_t i) { return x[i] > T(0) ? dy[i] : gamma[ch(i)] * dy[i]; });
  if (c.req[1] == OpReq::kNull) return;
  const Shape& s = c.inputs[0].shape;
  const PreluGammaGrad<T> dgamma{
      s[0], s[1], ch.inner, ch.channels == 1, x, dy, c.in_grads[1].ptr<T>(), c.req[1]};
  parallel_for(dgamma.size(),
               std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, s[0] * ch.inner)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t k = begin; k < end; ++k) dgamma(k);
               });
}

#if MX_USE_CUDA
template <typename T>
void leaky_forward_gpu(const LeakyReLUParam& p, const ForwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  if (p.act_type == LeakyType::kPRelu) {
    cuda::run_elements(n, c.rctx.stream, "LeakyReLU",
                       PreluForward<T>{channel_map(c.inputs[0].shape, c.inputs[1].shape), x,
                                       c.inputs[1].ptr<T>(), y, c.req[0]});
    return;
  }
  cuda::run_elements(n, c.rctx.stream, "LeakyReLU",
                     LeakyForward<T>{p.act_type, static_cast<T>(p.slope), x, y, c.req[0]});
}

template <typename T>
void leaky_backward_gpu(const LeakyReLUParam& p, const BackwardCall& c) {
  const T* x = c.inputs[0].ptr<T>();
  const T* dy = c.out_grads[0].ptr<T>();
  const int64_t n = c.inputs[0].size();
  T* dx = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  if (p.act_type != LeakyType::kPRelu) {
    if (c.req[0] == OpReq::kNull) return;
    cuda::run_elements(n, c.rctx.stream, "LeakyReLU",
                       LeakyBackward<T>{p.act_type, static_cast<T>(p.slope), x, dy, dx, c.req[0]});
    return;
  }
  const T* gamma = c.inputs[1].ptr<T>();
  const PreluChannel ch = channel_map(c.inputs[0].shape, c.inputs[1].shape);
  if (c.req[0] != OpReq::kNull)
    cuda::run_elements(n, c.rctx.stream, "LeakyReLU",
                       PreluBackwardData<T>{ch, x, gamma, dy, dx, c.req[0]});
  if (c.req[1] == OpReq::kNull) return;
  const Shape& s = c.inputs[0].shape;
  const PreluGammaGrad<T> dgamma{
      s[0], s[1], ch.inner, ch.channels == 1, x, dy, c.in_grads[1].ptr<T>(), c.req[1]};
  cuda::prelu_gamma_grad(dgamma, c.rctx.stream);
}
#endif

}  // namespace

void register_leaky_relu_ops(OpRegistry& r) {
  r.add<LeakyReLUParam>("LeakyReLU")
      .amp(AmpClass::kFloat32)
      .describe("Leaky, parametric (prelu), elu, selu and gelu rectified activations.")
      .inputs(input_names)
      .infer_shape(infer_leaky_relu)
      .backward_uses(true, false)
      .forward_cpu([](const LeakyReLUParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LeakyReLU",
                      [&](auto tag) { leaky_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const LeakyReLUParam& p, const BackwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "LeakyReLU",
                      [&](auto tag) { leaky_backward<typename decltype(tag)::type>(p, c); });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const LeakyReLUParam& p, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, "LeakyReLU", [&](auto tag) {
                   leaky_forward_gpu<typename decltype(tag)::type>(p, c);
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const LeakyReLUParam& p, const BackwardCall& c) {
                  dispatch_real(c.inputs[0].dtype, "LeakyReLU", [&](auto tag) {
                    leaky_backward_gpu<typename decltype(tag)::type>(p, c);
                  });
                })
#endif
      ;
}

}  // namespace mx::op
