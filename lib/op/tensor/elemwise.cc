// Element-wise operators: binary (elemwise_*), with a scalar (_plus_scalar,
// ...), unary math (relu, exp, ...), add_n, clip, BlockGrad, identity and
// zeros_like/ones_like. Each is a forward functor and its derivative.
#include <cmath>
#include <limits>
#include <type_traits>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"

namespace mx::op {
namespace {

void same_shape(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  infer_same_shape(in, out);
}

// ---- binary -------------------------------------------------------------

enum class Binary { kAdd, kSub, kMul, kDiv };

void register_binary(OpRegistry& r, const char* name, Binary kind, const char* what) {
  r.add<NoParams>(name)
      .describe(what)
      .inputs({"lhs", "rhs"})
      .infer_shape(same_shape)
      .inplace({{0, 0}, {1, 0}})
      .forward_cpu([kind, name](const NoParams&, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* a = c.inputs[0].ptr<T>();
          const T* b = c.inputs[1].ptr<T>();
          T* out = c.outputs[0].ptr<T>();
          const int64_t n = c.outputs[0].size();
          switch (kind) {
            case Binary::kAdd:
              map_index(out, n, c.req[0], [=](int64_t i) { return a[i] + b[i]; });
              break;
            case Binary::kSub:
              map_index(out, n, c.req[0], [=](int64_t i) { return a[i] - b[i]; });
              break;
            case Binary::kMul:
              map_index(out, n, c.req[0], [=](int64_t i) { return a[i] * b[i]; });
              break;
            case Binary::kDiv:
              map_index(out, n, c.req[0], [=](int64_t i) { return a[i] / b[i]; });
              break;
          }
        });
      })
      .backward_uses(kind == Binary::kMul || kind == Binary::kDiv, false)
      .backward_cpu([kind, name](const NoParams&, const BackwardCall& c) {
        dispatch_real(c.out_grads[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          const int64_t n = c.out_grads[0].size();
          T* ga = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
          T* gb = c.req[1] == OpReq::kNull ? nullptr : c.in_grads[1].ptr<T>();
          switch (kind) {
            case Binary::kAdd:
              map_index(ga, n, c.req[0], [=](int64_t i) { return g[i]; });
              map_index(gb, n, c.req[1], [=](int64_t i) { return g[i]; });
              break;
            case Binary::kSub:
              map_index(ga, n, c.req[0], [=](int64_t i) { return g[i]; });
              map_index(gb, n, c.req[1], [=](int64_t i) { return -g[i]; });
              break;
            case Binary::kMul: {
              const T* a = c.inputs[0].ptr<T>();
              const T* b = c.inputs[1].ptr<T>();
              map_index(ga, n, c.req[0], [=](int64_t i) { return g[i] * b[i]; });
              map_index(gb, n, c.req[1], [=](int64_t i) { return g[i] * a[i]; });
              break;
            }
            case Binary::kDiv: {
              const T* a = c.inputs[0].ptr<T>();
              const T* b = c.inputs[1].ptr<T>();
              map_index(ga, n, c.req[0], [=](int64_t i) { return g[i] / b[i]; });
              map_index(gb, n, c.req[1], [=](int64_t i) { return -g[i] * a[i] / (b[i] * b[i]); });
              break;
            }
          }
        });
      });
}

// ---- with a scalar ------------------------------------------------------

struct ScalarParam : Params<ScalarParam> {
  double scalar = 1.0;
  bool is_int = true;
  static void declare(ParamDecl<ScalarParam>& d) {
    d.field("scalar", &ScalarParam::scalar).set_default(1.0).describe("The scalar operand.");
    d.field("is_int", &ScalarParam::is_int)
        .set_default(true)
        .describe("Whether the scalar was given as an integer (kept for MXNet compatibility).");
  }
};

enum class WithScalar {
  kPlus,
  kMinus,
  kRMinus,
  kMul,
  kDiv,
  kRDiv,
  kPower,
  kRPower,
  kMaximum,
  kMinimum
};

template <typename T>
T scalar_forward(WithScalar kind, T x, T s) {
  switch (kind) {
    case WithScalar::kPlus: return x + s;
    case WithScalar::kMinus: return x - s;
    case WithScalar::kRMinus: return s - x;
    case WithScalar::kMul: return x * s;
    case WithScalar::kDiv: return x / s;
    case WithScalar::kRDiv: return s / x;
    case WithScalar::kPower: return std::pow(x, s);
    case WithScalar::kRPower: return std::pow(s, x);
    case WithScalar::kMaximum: return x > s ? x : s;
    case WithScalar::kMinimum: return x < s ? x : s;
  }
  return x;
}

// d(out)/d(x) at x (y = forward(x)).
template <typename T>
T scalar_derivative(WithScalar kind, T x, T y, T s) {
  switch (kind) {
    case WithScalar::kPlus:
    case WithScalar::kMinus: return T(1);
    case WithScalar::kRMinus: return T(-1);
    case WithScalar::kMul: return s;
    case WithScalar::kDiv: return T(1) / s;
    case WithScalar::kRDiv: return -s / (x * x);
    case WithScalar::kPower: return s * std::pow(x, s - T(1));
    case WithScalar::kRPower: return y * std::log(s);
    case WithScalar::kMaximum: return x > s ? T(1) : T(0);
    case WithScalar::kMinimum: return x < s ? T(1) : T(0);
  }
  return T(0);
}

void register_scalar(OpRegistry& r, const char* name, WithScalar kind, const char* what) {
  r.add<ScalarParam>(name)
      .describe(what)
      .inputs({"data"})
      .infer_shape([](const ScalarParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .forward_cpu([kind, name](const ScalarParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          const T s = static_cast<T>(p.scalar);
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return scalar_forward(kind, x[i], s); });
        });
      })
      .backward_cpu([kind, name](const ScalarParam& p, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real(c.out_grads[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          const T* x = c.inputs[0].ptr<T>();
          const T* y = c.outputs[0].ptr<T>();
          const T s = static_cast<T>(p.scalar);
          map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                    [=](int64_t i) { return g[i] * scalar_derivative(kind, x[i], y[i], s); });
        });
      });
}

// ---- unary math ---------------------------------------------------------

enum class Unary {
  kRelu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kSquare,
  kAbs,
  kNegative,
  kReciprocal,
  kIdentity
};

template <typename T>
T unary_forward(Unary kind, T x) {
  switch (kind) {
    case Unary::kRelu: return x > T(0) ? x : T(0);
    case Unary::kSigmoid: return T(1) / (T(1) + std::exp(-x));
    case Unary::kTanh: return std::tanh(x);
    case Unary::kExp: return std::exp(x);
    case Unary::kLog: return std::log(x);
    case Unary::kSqrt: return std::sqrt(x);
    case Unary::kSquare: return x * x;
    case Unary::kAbs: return std::abs(x);
    case Unary::kNegative: return -x;
    case Unary::kReciprocal: return T(1) / x;
    case Unary::kIdentity: return x;
  }
  return x;
}

template <typename T>
T unary_derivative(Unary kind, T x, T y) {
  switch (kind) {
    case Unary::kRelu: return x > T(0) ? T(1) : T(0);
    case Unary::kSigmoid: return y * (T(1) - y);
    case Unary::kTanh: return T(1) - y * y;
    case Unary::kExp: return y;
    case Unary::kLog: return T(1) / x;
    case Unary::kSqrt: return T(0.5) / y;
    case Unary::kSquare: return T(2) * x;
    case Unary::kAbs: return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case Unary::kNegative: return T(-1);
    case Unary::kReciprocal: return -y * y;
    case Unary::kIdentity: return T(1);
  }
  return T(0);
}

// The vectorised float32 kernel of kind, if it has one.
vmath::UnaryFn vector_kernel(Unary kind) {
  switch (kind) {
    case Unary::kSigmoid: return vmath::active().sigmoid;
    case Unary::kTanh: return vmath::active().tanh;
    case Unary::kExp: return vmath::active().exp;
    case Unary::kLog: return vmath::active().log;
    default: return nullptr;
  }
}

void register_unary(OpRegistry& r, const char* name, Unary kind, const char* what,
                    std::vector<const char*> aliases = {}) {
  auto b = r.add<NoParams>(name);
  for (const char* a : aliases) b.alias(a);
  b.describe(what)
      .inputs({"data"})
      .infer_shape(same_shape)
      .inplace({{0, 0}})
      .forward_cpu([kind, name](const NoParams&, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          if constexpr (std::is_same_v<T, float>) {
            if (vmath::UnaryFn f = vector_kernel(kind)) {
              map_blocks(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                         [=](int64_t begin, int64_t len, float* dst) { f(x + begin, dst, len); });
              return;
            }
          }
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return unary_forward(kind, x[i]); });
        });
      })
      .backward_cpu([kind, name](const NoParams&, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real(c.out_grads[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          const T* x = c.inputs[0].ptr<T>();
          const T* y = c.outputs[0].ptr<T>();
          map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                    [=](int64_t i) { return g[i] * unary_derivative(kind, x[i], y[i]); });
        });
      });
}

// ---- add_n, clip, BlockGrad, zeros_like/ones_like ------------------------

struct AddNParam : Params<AddNParam> {
  int num_args = 1;
  static void declare(ParamDecl<AddNParam>& d) {
    d.field("num_args", &AddNParam::num_args)
        .set_lower_bound(1)
        .describe("Number of inputs to add.");
  }
};

struct ClipParam : Params<ClipParam> {
  float a_min = 0, a_max = 0;
  static void declare(ParamDecl<ClipParam>& d) {
    d.field("a_min", &ClipParam::a_min).describe("Minimum value.");
    d.field("a_max", &ClipParam::a_max).describe("Maximum value.");
  }
};

void register_misc(OpRegistry& r) {
  r.add<AddNParam>("ElementWiseSum")
      .alias("add_n")
      .alias("_sum")
      .describe("Adds all inputs element-wise.")
      .inputs([](const AddNParam& p) {
        std::vector<std::string> names;
        for (int i = 0; i < p.num_args; ++i) names.push_back("arg" + std::to_string(i));
        return names;
      })
      .infer_shape([](const AddNParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .forward_cpu([](const AddNParam&, const ForwardCall& c) {
        dispatch_real(c.outputs[0].dtype, "ElementWiseSum", [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::vector<const T*> xs;
          for (const auto& in : c.inputs) xs.push_back(in.ptr<T>());
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0], [&](int64_t i) {
            T s = 0;
            for (const T* x : xs) s += x[i];
            return s;
          });
        });
      })
      .backward_uses(false, false)
      .backward_cpu([](const AddNParam&, const BackwardCall& c) {
        dispatch_real(c.out_grads[0].dtype, "ElementWiseSum", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          for (size_t k = 0; k < c.in_grads.size(); ++k) {
            if (c.req[k] == OpReq::kNull) continue;
            map_index(c.in_grads[k].ptr<T>(), c.in_grads[k].size(), c.req[k],
                      [=](int64_t i) { return g[i]; });
          }
        });
      });

  r.add<ClipParam>("clip")
      .describe("Clips values to [a_min, a_max].")
      .inputs({"data"})
      .infer_shape([](const ClipParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .forward_cpu([](const ClipParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "clip", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          const T lo = static_cast<T>(p.a_min), hi = static_cast<T>(p.a_max);
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return x[i] < lo ? lo : (x[i] > hi ? hi : x[i]); });
        });
      })
      .backward_uses(true, false)
      .backward_cpu([](const ClipParam& p, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real(c.out_grads[0].dtype, "clip", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          const T* x = c.inputs[0].ptr<T>();
          const T lo = static_cast<T>(p.a_min), hi = static_cast<T>(p.a_max);
          map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                    [=](int64_t i) { return x[i] >= lo && x[i] <= hi ? g[i] : T(0); });
        });
      });

  // BlockGrad: identity forward, zero gradient.
  r.add<NoParams>("BlockGrad")
      .alias("stop_gradient")
      .describe("Passes the input through and stops the gradient.")
      .inputs({"data"})
      .infer_shape(same_shape)
      .inplace({{0, 0}})
      .forward_cpu([](const NoParams&, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "BlockGrad", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return x[i]; });
        });
      })
      .backward_uses(false, false)
      .backward_cpu([](const NoParams&, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull || c.req[0] == OpReq::kAdd) return;
        dispatch_real(c.in_grads[0].dtype, "BlockGrad", [&](auto tag) {
          using T = typename decltype(tag)::type;
          map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                    [](int64_t) { return T(0); });
        });
      });

  for (auto [name, value] : {std::pair{"zeros_like", 0.0}, std::pair{"ones_like", 1.0}}) {
    r.add<NoParams>(name)
        .describe(value == 0.0 ? "An array of zeros shaped like the input."
                               : "An array of ones shaped like the input.")
        .inputs({"data"})
        .infer_shape(same_shape)
        .forward_cpu([value = value, name = name](const NoParams&, const ForwardCall& c) {
          dispatch_real(c.outputs[0].dtype, name, [&](auto tag) {
            using T = typename decltype(tag)::type;
            map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                      [=](int64_t) { return static_cast<T>(value); });
          });
        })
        .backward_uses(false, false)
        .backward_cpu([name = name](const NoParams&, const BackwardCall& c) {
          if (c.req[0] == OpReq::kNull || c.req[0] == OpReq::kAdd) return;
          dispatch_real(c.in_grads[0].dtype, name, [&](auto tag) {
            using T = typename decltype(tag)::type;
            map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                      [](int64_t) { return T(0); });
          });
        });
  }
}

}  // namespace

void register_elemwise_ops(OpRegistry& r) {
  register_binary(r, "elemwise_add", Binary::kAdd, "Adds two arrays of the same shape.");
  register_binary(r, "elemwise_sub", Binary::kSub, "Subtracts two arrays of the same shape.");
  register_binary(r, "elemwise_mul", Binary::kMul, "Multiplies two arrays of the same shape.");
  register_binary(r, "elemwise_div", Binary::kDiv, "Divides two arrays of the same shape.");

  register_scalar(r, "_plus_scalar", WithScalar::kPlus, "data + scalar");
  register_scalar(r, "_minus_scalar", WithScalar::kMinus, "data - scalar");
  register_scalar(r, "_rminus_scalar", WithScalar::kRMinus, "scalar - data");
  register_scalar(r, "_mul_scalar", WithScalar::kMul, "data * scalar");
  register_scalar(r, "_div_scalar", WithScalar::kDiv, "data / scalar");
  register_scalar(r, "_rdiv_scalar", WithScalar::kRDiv, "scalar / data");
  register_scalar(r, "_power_scalar", WithScalar::kPower, "data ** scalar");
  register_scalar(r, "_rpower_scalar", WithScalar::kRPower, "scalar ** data");
  register_scalar(r, "_maximum_scalar", WithScalar::kMaximum, "max(data, scalar)");
  register_scalar(r, "_minimum_scalar", WithScalar::kMinimum, "min(data, scalar)");

  register_unary(r, "relu", Unary::kRelu, "max(x, 0)");
  register_unary(r, "sigmoid", Unary::kSigmoid, "1 / (1 + exp(-x))");
  register_unary(r, "tanh", Unary::kTanh, "Hyperbolic tangent.");
  register_unary(r, "exp", Unary::kExp, "e ** x");
  register_unary(r, "log", Unary::kLog, "Natural logarithm.");
  register_unary(r, "sqrt", Unary::kSqrt, "Square root.");
  register_unary(r, "square", Unary::kSquare, "x * x");
  register_unary(r, "abs", Unary::kAbs, "Absolute value.");
  register_unary(r, "negative", Unary::kNegative, "-x");
  register_unary(r, "reciprocal", Unary::kReciprocal, "1 / x");
  register_unary(r, "_copy", Unary::kIdentity, "Copies the input.", {"identity"});

  register_misc(r);
}

}  // namespace mx::op
