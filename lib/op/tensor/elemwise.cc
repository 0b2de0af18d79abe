// Element-wise operators: binary (elemwise_*), with a scalar (_plus_scalar,
// ...), unary math (relu, exp, ...), comparisons and logical operators
// (_equal, _greater_scalar, logical_not, ...), add_n, clip, BlockGrad,
// identity and zeros_like/ones_like. Each is a forward functor and its
// derivative.
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "base/error.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/elemwise_kernels.h"
#include "op/tensor/zero_gradient.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/elemwise_gpu.h"
#endif

namespace mx::op {
namespace {

void same_shape(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  infer_same_shape(in, out);
}

// Calls fn(std::integral_constant<E, kind>{}), kind being one of the values
// 0 .. kLast of the enum E: the CPU loops of the unary and scalar operators
// are compiled per kind, so the switch of the per-element function folds
// away and the simple kinds vectorise. (With the kind read in the loop,
// relu ran at 3.5 ns an element; the GPU kernels keep the runtime kind.)
// A kind past kLast (an enumerator added after it) is an error, not a
// silently skipped loop.
template <auto kLast, typename Fn>
void with_kind(decltype(kLast) kind, Fn&& fn) {
  using E = decltype(kLast);
  const bool ran = [&]<int... I>(std::integer_sequence<int, I...>) {
    return ((static_cast<int>(kind) == I &&
             (fn(std::integral_constant<E, static_cast<E>(I)>{}), true)) ||
            ...);
  }
  (std::make_integer_sequence<int, static_cast<int>(kLast) + 1>{});
  MX_CHECK(ran, "element-wise operation kind ", static_cast<int>(kind),
           " has no CPU loop (with_kind's last kind is ", static_cast<int>(kLast), ")");
}

// kernel(i) for i in [0, n) over the thread budget (a functor of
// elemwise_kernels.h, the GPU's per-element code); nothing for kNull.
template <typename F>
void run_elements(int64_t n, OpReq req, const F& kernel) {
  if (req == OpReq::kNull) return;
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    const F k = kernel;  // a local copy: its fields become loop invariants
    for (int64_t i = begin; i < end; ++i) k(i);
  });
}

// ---- binary -------------------------------------------------------------

// Whether side `side`'s gradient is the output's gradient itself, already in
// place (the planner gave it the output gradient's buffer): nothing to write.
bool identity_in_place(Binary kind, int side, const void* out_grad, const void* grad, OpReq req) {
  return (kind == Binary::kAdd || kind == Binary::kSub) && side == 0 && grad == out_grad &&
         (req == OpReq::kWrite || req == OpReq::kInplace);
}

void binary_backward(OpBuilder<NoParams>& b, const char* name, Binary kind) {
  const bool uses_inputs = kind == Binary::kMul || kind == Binary::kDiv;
  // The left gradient of + and - is the output's: it may take that buffer
  // (the right side reads the output gradient after, unchanged), so a
  // residual addition's backward pass copies one gradient, not two.
  if (kind == Binary::kAdd || kind == Binary::kSub) b.backward_inplace();
  b.backward_uses(uses_inputs, false)
      .backward_cpu([kind, name, uses_inputs](const NoParams&, const BackwardCall& c) {
        dispatch_real_bf16(c.out_grads[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* a = uses_inputs ? c.inputs[0].ptr<T>() : nullptr;
          const T* bv = uses_inputs ? c.inputs[1].ptr<T>() : nullptr;
          for (int side = 0; side < 2; ++side) {
            const OpReq req = c.req[static_cast<size_t>(side)];
            if (req == OpReq::kNull) continue;
            T* grad = c.in_grads[static_cast<size_t>(side)].ptr<T>();
            if (identity_in_place(kind, side, c.out_grads[0].ptr<T>(), grad, req)) continue;
            with_binary(kind, [&](auto k) {
              run_elements(c.out_grads[0].size(), req,
                           BinaryBackwardKernel<decltype(k)::value, T>{c.out_grads[0].ptr<T>(), a,
                                                                       bv, grad, req, side});
            });
          }
        });
      });
#if MX_USE_CUDA
  b.backward(DeviceKind::kGPU, [kind, name, uses_inputs](const NoParams&, const BackwardCall& c) {
    dispatch_real_amp(c.out_grads[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = uses_inputs ? c.inputs[0].ptr<T>() : nullptr;
      const T* bv = uses_inputs ? c.inputs[1].ptr<T>() : nullptr;
      for (int side = 0; side < 2; ++side) {
        const OpReq req = c.req[static_cast<size_t>(side)];
        if (req == OpReq::kNull ||
            identity_in_place(kind, side, c.out_grads[0].ptr<T>(),
                              c.in_grads[static_cast<size_t>(side)].ptr<T>(), req))
          continue;
        cuda::binary_backward_gpu<T>(name, kind, side, c.out_grads[0].ptr<T>(), a, bv,
                                     c.in_grads[static_cast<size_t>(side)].ptr<T>(),
                                     c.out_grads[0].size(), req, c.rctx.stream);
      }
    });
  });
#endif
}

// Element-wise binary operators (same shapes): arithmetic, and the comparison
// and logical ones with their zero gradients.
void register_binary(OpRegistry& r, const char* name, Binary kind, const char* what,
                     const char* alias = nullptr) {
  auto b = r.add<NoParams>(name);
  if (alias != nullptr) b.alias(alias);
  b.describe(what)
      .amp(AmpClass::kWidest)
      .inputs({"lhs", "rhs"})
      .infer_shape(same_shape)
      .inplace({{0, 0}, {1, 0}})
      .inference_layer([kind](const NoParams&, const ShapeVector& in,
                              const ShapeVector&) -> std::optional<InferenceLayer> {
        if (kind != Binary::kAdd) return std::nullopt;
        return residual_addition(in[0], in[1]);
      })
      .forward_cpu([kind, name](const NoParams&, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          with_binary(kind, [&](auto k) {
            run_elements(
                c.outputs[0].size(), c.req[0],
                BinaryForwardKernel<decltype(k)::value, T>{
                    c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(), c.outputs[0].ptr<T>(), c.req[0]});
          });
        });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [kind, name](const NoParams&, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::binary_forward_gpu<T>(name, kind, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(),
                                  c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                                  c.rctx.stream);
    });
  });
#endif
  if (is_logic(kind))
    zero_gradient(b, name);
  else
    binary_backward(b, name, kind);
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

void scalar_backward(OpBuilder<ScalarParam>& b, const char* name, WithScalar kind) {
  b.backward_cpu([kind, name](const ScalarParam& p, const BackwardCall& c) {
    if (c.req[0] == OpReq::kNull) return;
    dispatch_real_bf16(c.out_grads[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ElemCompute<T>;
      const T* g = c.out_grads[0].ptr<T>();
      const T* x = c.inputs[0].ptr<T>();
      const T* y = c.outputs[0].ptr<T>();
      const C s = C(static_cast<T>(p.scalar));
      with_kind<WithScalar::kLogicalXor>(kind, [&](auto k) {
        map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0], [=](int64_t i) {
          return T(C(g[i]) * scalar_derivative(decltype(k)::value, C(x[i]), C(y[i]), s));
        });
      });
    });
  });
#if MX_USE_CUDA
  b.backward(DeviceKind::kGPU, [kind, name](const ScalarParam& p, const BackwardCall& c) {
    if (c.req[0] == OpReq::kNull) return;
    dispatch_real_amp(c.out_grads[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::scalar_backward_gpu<T>(name, kind, static_cast<T>(p.scalar), c.out_grads[0].ptr<T>(),
                                   c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(),
                                   c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                                   c.rctx.stream);
    });
  });
#endif
}

// The scalar is converted to the input's type first, as in MXNet.
void register_scalar(OpRegistry& r, const char* name, WithScalar kind, const char* what,
                     const char* alias = nullptr) {
  auto b = r.add<ScalarParam>(name);
  if (alias != nullptr) b.alias(alias);
  b.describe(what)
      .amp(AmpClass::kFloat32)  // MXNet's FP32_FUNCS list every scalar operator
      .inputs({"data"})
      .infer_shape([](const ScalarParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .forward_cpu([kind, name](const ScalarParam& p, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          using C = ElemCompute<T>;
          const T* x = c.inputs[0].ptr<T>();
          const C s = C(static_cast<T>(p.scalar));
          with_kind<WithScalar::kLogicalXor>(kind, [&](auto k) {
            map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                      [=](int64_t i) { return T(scalar_forward(decltype(k)::value, C(x[i]), s)); });
          });
        });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [kind, name](const ScalarParam& p, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::scalar_forward_gpu<T>(name, kind, static_cast<T>(p.scalar), c.inputs[0].ptr<T>(),
                                  c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                                  c.rctx.stream);
    });
  });
#endif
  if (is_logic(kind))
    zero_gradient(b, name);
  else
    scalar_backward(b, name, kind);
}

// ---- unary math ---------------------------------------------------------

// The vectorised float32 kernel of kind, if it has one.
vmath::UnaryFn vector_kernel(Unary kind) {
  switch (kind) {
    case Unary::kSigmoid: return vmath::active().sigmoid;
    case Unary::kTanh: return vmath::active().tanh;
    case Unary::kExp: return vmath::active().exp;
    case Unary::kLog: return vmath::active().log;
    case Unary::kErf: return vmath::active().erf;
    default: return nullptr;
  }
}

void unary_backward(OpBuilder<NoParams>& b, const char* name, Unary kind) {
  b.backward_cpu([kind, name](const NoParams&, const BackwardCall& c) {
    if (c.req[0] == OpReq::kNull) return;
    dispatch_real_bf16(c.out_grads[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = ElemCompute<T>;
      const T* g = c.out_grads[0].ptr<T>();
      const T* x = c.inputs[0].ptr<T>();
      const T* y = c.outputs[0].ptr<T>();
      with_kind<Unary::kLogicalNot>(kind, [&](auto k) {
        map_index(c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0], [=](int64_t i) {
          return T(C(g[i]) * unary_derivative(decltype(k)::value, C(x[i]), C(y[i])));
        });
      });
    });
  });
#if MX_USE_CUDA
  b.backward(DeviceKind::kGPU, [kind, name](const NoParams&, const BackwardCall& c) {
    if (c.req[0] == OpReq::kNull) return;
    dispatch_real_amp(c.out_grads[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::unary_backward_gpu<T>(name, kind, c.out_grads[0].ptr<T>(), c.inputs[0].ptr<T>(),
                                  c.outputs[0].ptr<T>(), c.in_grads[0].ptr<T>(),
                                  c.in_grads[0].size(), c.req[0], c.rctx.stream);
    });
  });
#endif
}

// MXNet's BF16_FP32_FUNCS (relu, tanh, sqrt, square, abs) run in either
// precision; the rest are its FP32_FUNCS.
AmpClass unary_amp_class(Unary kind) {
  switch (kind) {
    case Unary::kRelu:
    case Unary::kTanh:
    case Unary::kSqrt:
    case Unary::kSquare:
    case Unary::kAbs: return AmpClass::kFollow;
    default: return AmpClass::kFloat32;
  }
}

void register_unary(OpRegistry& r, const char* name, Unary kind, const char* what,
                    std::vector<const char*> aliases = {}) {
  auto b = r.add<NoParams>(name);
  for (const char* a : aliases) b.alias(a);
  b.describe(what)
      .amp(unary_amp_class(kind))
      .inputs({"data"})
      .infer_shape(same_shape)
      .inplace({{0, 0}})
      .forward_cpu([kind, name](const NoParams&, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          if constexpr (std::is_same_v<T, float>) {
            if (vmath::UnaryFn f = vector_kernel(kind)) {
              map_blocks(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                         [=](int64_t begin, int64_t len, float* dst) { f(x + begin, dst, len); });
              return;
            }
          }
          with_kind<Unary::kLogicalNot>(kind, [&](auto k) {
            using C = ElemCompute<T>;
            map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                      [=](int64_t i) { return T(unary_forward(decltype(k)::value, C(x[i]))); });
          });
        });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [kind, name](const NoParams&, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, name, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::unary_forward_gpu<T>(name, kind, c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(),
                                 c.outputs[0].size(), c.req[0], c.rctx.stream);
    });
  });
#endif
  if (is_logic(kind))
    zero_gradient(b, name);
  else
    unary_backward(b, name, kind);
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

void register_add_n(OpRegistry& r) {
  auto add_n = r.add<AddNParam>("ElementWiseSum");
  add_n.alias("add_n")
      .alias("_sum")
      .describe("Adds all inputs element-wise.")
      .amp(AmpClass::kWidest)
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
        dispatch_real_bf16(c.outputs[0].dtype, "ElementWiseSum", [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::vector<const T*> xs;
          for (const auto& in : c.inputs) xs.push_back(in.ptr<T>());
          // bfloat16 sums in float, rounded once.
          using Acc = std::conditional_t<is_half_like_v<T>, float, T>;
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0], [&](int64_t i) {
            Acc s = 0;
            for (const T* x : xs) s += x[i];
            return static_cast<T>(s);
          });
        });
      })
      .backward_uses(false, false)
      .backward_cpu([](const AddNParam&, const BackwardCall& c) {
        dispatch_real_bf16(c.out_grads[0].dtype, "ElementWiseSum", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* g = c.out_grads[0].ptr<T>();
          for (size_t k = 0; k < c.in_grads.size(); ++k)
            run_elements(c.in_grads[k].size(), c.req[k],
                         CopyKernel<T>{g, c.in_grads[k].ptr<T>(), c.req[k]});
        });
      });
#if MX_USE_CUDA
  add_n
      .forward(DeviceKind::kGPU,
               [](const AddNParam&, const ForwardCall& c) {
                 dispatch_real_amp(c.outputs[0].dtype, "ElementWiseSum", [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   std::vector<const T*> xs;
                   for (const auto& in : c.inputs) xs.push_back(in.ptr<T>());
                   cuda::add_n_gpu<T>("ElementWiseSum", xs, c.outputs[0].ptr<T>(),
                                      c.outputs[0].size(), c.req[0], c.rctx.stream);
                 });
               })
      .backward(DeviceKind::kGPU, [](const AddNParam&, const BackwardCall& c) {
        dispatch_real_amp(c.out_grads[0].dtype, "ElementWiseSum", [&](auto tag) {
          using T = typename decltype(tag)::type;
          for (size_t k = 0; k < c.in_grads.size(); ++k)
            cuda::copy_gpu<T>("ElementWiseSum", c.out_grads[0].ptr<T>(), c.in_grads[k].ptr<T>(),
                              c.in_grads[k].size(), c.req[k], c.rctx.stream);
        });
      });
#endif
}

void register_clip(OpRegistry& r) {
  auto clip = r.add<ClipParam>("clip");
  clip.describe("Clips values to [a_min, a_max].")
      .amp(AmpClass::kFollow)
      .inputs({"data"})
      .infer_shape([](const ClipParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
      .inplace({{0, 0}})
      .forward_cpu([](const ClipParam& p, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, "clip", [&](auto tag) {
          using T = typename decltype(tag)::type;
          run_elements(c.outputs[0].size(), c.req[0],
                       ClipForwardKernel<T>{static_cast<T>(p.a_min), static_cast<T>(p.a_max),
                                            c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(), c.req[0]});
        });
      })
      .backward_uses(true, false)
      .backward_cpu([](const ClipParam& p, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real_bf16(c.out_grads[0].dtype, "clip", [&](auto tag) {
          using T = typename decltype(tag)::type;
          run_elements(c.in_grads[0].size(), c.req[0],
                       ClipBackwardKernel<T>{static_cast<T>(p.a_min), static_cast<T>(p.a_max),
                                             c.out_grads[0].ptr<T>(), c.inputs[0].ptr<T>(),
                                             c.in_grads[0].ptr<T>(), c.req[0]});
        });
      });
#if MX_USE_CUDA
  clip.forward(DeviceKind::kGPU,
               [](const ClipParam& p, const ForwardCall& c) {
                 dispatch_real_amp(c.inputs[0].dtype, "clip", [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   cuda::clip_forward_gpu<T>("clip", static_cast<T>(p.a_min),
                                             static_cast<T>(p.a_max), c.inputs[0].ptr<T>(),
                                             c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                                             c.rctx.stream);
                 });
               })
      .backward(DeviceKind::kGPU, [](const ClipParam& p, const BackwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        dispatch_real_amp(c.out_grads[0].dtype, "clip", [&](auto tag) {
          using T = typename decltype(tag)::type;
          cuda::clip_backward_gpu<T>("clip", static_cast<T>(p.a_min), static_cast<T>(p.a_max),
                                     c.out_grads[0].ptr<T>(), c.inputs[0].ptr<T>(),
                                     c.in_grads[0].ptr<T>(), c.in_grads[0].size(), c.req[0],
                                     c.rctx.stream);
        });
      });
#endif
}

void register_block_grad(OpRegistry& r) {
  // BlockGrad: identity forward, zero gradient.
  auto block_grad = r.add<NoParams>("BlockGrad");
  block_grad.alias("stop_gradient")
      .describe("Passes the input through and stops the gradient.")
      .amp(AmpClass::kFloat32)
      .inputs({"data"})
      .stops_gradient()
      .infer_shape(same_shape)
      .inplace({{0, 0}})
      .forward_cpu([](const NoParams&, const ForwardCall& c) {
        dispatch_real_bf16(c.inputs[0].dtype, "BlockGrad", [&](auto tag) {
          using T = typename decltype(tag)::type;
          run_elements(c.outputs[0].size(), c.req[0],
                       CopyKernel<T>{c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(), c.req[0]});
        });
      });
#if MX_USE_CUDA
  block_grad.forward(DeviceKind::kGPU, [](const NoParams&, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, "BlockGrad", [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::copy_gpu<T>("BlockGrad", c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(),
                        c.outputs[0].size(), c.req[0], c.rctx.stream);
    });
  });
#endif
  zero_gradient(block_grad, "BlockGrad");
}

void register_fill_like(OpRegistry& r) {
  for (auto [name, value] : {std::pair{"zeros_like", 0.0}, std::pair{"ones_like", 1.0}}) {
    auto like = r.add<NoParams>(name);
    like.describe(value == 0.0 ? "An array of zeros shaped like the input."
                               : "An array of ones shaped like the input.")
        .amp(AmpClass::kFloat32)
        .inputs({"data"})
        .stops_gradient()
        .infer_shape(same_shape)
        .forward_cpu([value = value, name = name](const NoParams&, const ForwardCall& c) {
          dispatch_real_bf16(c.outputs[0].dtype, name, [&](auto tag) {
            using T = typename decltype(tag)::type;
            run_elements(c.outputs[0].size(), c.req[0],
                         FillKernel<T>{static_cast<T>(value), c.outputs[0].ptr<T>(), c.req[0]});
          });
        });
#if MX_USE_CUDA
    like.forward(DeviceKind::kGPU,
                 [value = value, name = name](const NoParams&, const ForwardCall& c) {
                   dispatch_real_amp(c.outputs[0].dtype, name, [&](auto tag) {
                     using T = typename decltype(tag)::type;
                     cuda::fill_gpu<T>(name, static_cast<T>(value), c.outputs[0].ptr<T>(),
                                       c.outputs[0].size(), c.req[0], c.rctx.stream);
                   });
                 });
#endif
    zero_gradient(like, name);
  }
}

// MXNet's comparison and logical operators: 1 where the relation holds, else
// 0, in the input's dtype; zero gradients. The Capitalised aliases are the
// names older MXNet symbol files use.
void register_logic(OpRegistry& r) {
  register_binary(r, "_equal", Binary::kEqual, "lhs == rhs (1 or 0), same shapes.", "_Equal");
  register_binary(r, "_not_equal", Binary::kNotEqual, "lhs != rhs (1 or 0), same shapes.",
                  "_Not_Equal");
  register_binary(r, "_greater", Binary::kGreater, "lhs > rhs (1 or 0), same shapes.", "_Greater");
  register_binary(r, "_greater_equal", Binary::kGreaterEqual, "lhs >= rhs (1 or 0), same shapes.",
                  "_Greater_Equal");
  register_binary(r, "_lesser", Binary::kLesser, "lhs < rhs (1 or 0), same shapes.", "_Lesser");
  register_binary(r, "_lesser_equal", Binary::kLesserEqual, "lhs <= rhs (1 or 0), same shapes.",
                  "_Lesser_Equal");
  register_binary(r, "_logical_and", Binary::kLogicalAnd,
                  "lhs and rhs (1 or 0; nonzero is true), same shapes.", "_Logical_And");
  register_binary(r, "_logical_or", Binary::kLogicalOr,
                  "lhs or rhs (1 or 0; nonzero is true), same shapes.", "_Logical_Or");
  register_binary(r, "_logical_xor", Binary::kLogicalXor,
                  "lhs xor rhs (1 or 0; nonzero is true), same shapes.", "_Logical_Xor");

  register_scalar(r, "_equal_scalar", WithScalar::kEqual, "data == scalar (1 or 0)",
                  "_EqualScalar");
  register_scalar(r, "_not_equal_scalar", WithScalar::kNotEqual, "data != scalar (1 or 0)",
                  "_NotEqualScalar");
  register_scalar(r, "_greater_scalar", WithScalar::kGreater, "data > scalar (1 or 0)",
                  "_GreaterScalar");
  register_scalar(r, "_greater_equal_scalar", WithScalar::kGreaterEqual, "data >= scalar (1 or 0)",
                  "_GreaterEqualScalar");
  register_scalar(r, "_lesser_scalar", WithScalar::kLesser, "data < scalar (1 or 0)",
                  "_LesserScalar");
  register_scalar(r, "_lesser_equal_scalar", WithScalar::kLesserEqual, "data <= scalar (1 or 0)",
                  "_LesserEqualScalar");
  register_scalar(r, "_logical_and_scalar", WithScalar::kLogicalAnd,
                  "data and scalar (1 or 0; nonzero is true)", "_LogicalAndScalar");
  register_scalar(r, "_logical_or_scalar", WithScalar::kLogicalOr,
                  "data or scalar (1 or 0; nonzero is true)", "_LogicalOrScalar");
  register_scalar(r, "_logical_xor_scalar", WithScalar::kLogicalXor,
                  "data xor scalar (1 or 0; nonzero is true)", "_LogicalXorScalar");

  register_unary(r, "logical_not", Unary::kLogicalNot, "1 where x is 0, else 0.");
}

void register_misc(OpRegistry& r) {
  register_add_n(r);
  register_clip(r);
  register_block_grad(r);
  register_fill_like(r);
}

}  // namespace

void write_zero_gradients(const BackwardCall& c, [[maybe_unused]] DeviceKind device,
                          const char* op) {
  for (size_t k = 0; k < c.in_grads.size(); ++k) {
    const OpReq req = c.req[k];
    if (req == OpReq::kNull || req == OpReq::kAdd) continue;
    const TensorRef& grad = c.in_grads[k];
#if MX_USE_CUDA
    if (device == DeviceKind::kGPU) {
      dispatch_real_amp(grad.dtype, op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        cuda::fill_gpu<T>(op, T(0), grad.ptr<T>(), grad.size(), req, c.rctx.stream);
      });
      continue;
    }
#endif
    dispatch_real_bf16(grad.dtype, op, [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_elements(grad.size(), req, FillKernel<T>{T(0), grad.ptr<T>(), req});
    });
  }
}

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
  register_unary(r, "erf", Unary::kErf,
                 "The Gauss error function; its gradient is 2 / sqrt(pi) * exp(-x^2).");

  register_logic(r);
  register_misc(r);
}

}  // namespace mx::op
