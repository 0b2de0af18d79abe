// Activation (act_type relu, sigmoid, tanh, softrelu, softsign): MXNet's
// activation layer, one element-wise function and its derivative.
#include <cmath>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"

namespace mx::op {
namespace {

enum class ActType { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign };

struct ActivationParam : Params<ActivationParam> {
  ActType act_type = ActType::kRelu;
  static void declare(ParamDecl<ActivationParam>& d) {
    d.field("act_type", &ActivationParam::act_type)
        .add_enum("relu", ActType::kRelu)
        .add_enum("sigmoid", ActType::kSigmoid)
        .add_enum("tanh", ActType::kTanh)
        .add_enum("softrelu", ActType::kSoftRelu)
        .add_enum("softsign", ActType::kSoftSign)
        .describe("Activation function to apply.");
  }
};

template <typename T>
T activate(ActType t, T x) {
  switch (t) {
    case ActType::kRelu: return x > T(0) ? x : T(0);
    case ActType::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case ActType::kTanh: return std::tanh(x);
    // log(1 + e^x) without overflow for large x.
    case ActType::kSoftRelu: return x > T(20) ? x : std::log1p(std::exp(x));
    case ActType::kSoftSign: return x / (T(1) + std::abs(x));
  }
  return x;
}

// The derivative from the output alone, so the input need not be kept for
// the backward pass and the activation can run in place (as MXNet's does).
template <typename T>
T derivative(ActType t, T y) {
  switch (t) {
    case ActType::kRelu: return y > T(0) ? T(1) : T(0);
    case ActType::kSigmoid: return y * (T(1) - y);
    case ActType::kTanh: return T(1) - y * y;
    case ActType::kSoftRelu: return -std::expm1(-y);  // sigmoid(x) = 1 - e^-y for y = log(1 + e^x)
    case ActType::kSoftSign: {
      T d = T(1) - std::abs(y);  // 1 / (1 + |x|)
      return d * d;
    }
  }
  return T(0);
}

}  // namespace

void register_activation_ops(OpRegistry& r) {
  r.add<ActivationParam>("Activation")
      .describe("Applies an activation function element-wise.")
      .inputs({"data"})
      .infer_shape([](const ActivationParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .backward_uses(false, true)
      .backward_inplace()
      .forward_cpu([](const ActivationParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "Activation", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          const ActType t = p.act_type;
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return activate(t, x[i]); });
        });
      })
      .backward_cpu([](const ActivationParam& p, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real(c.out_grads[0].dtype, "Activation", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          const T* y = c.outputs[0].ptr<T>();
          const ActType t = p.act_type;
          map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                    [=](int64_t i) { return g[i] * derivative(t, y[i]); });
        });
      });
}

}  // namespace mx::op
