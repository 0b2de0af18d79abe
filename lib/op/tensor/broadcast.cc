// Binary operators with NumPy-style broadcasting (broadcast_add, _sub, _mul,
// _div, _maximum, _minimum). The gradient of an input that was broadcast is
// summed over the axes it was broadcast along. The comparison and logical
// ones (broadcast_equal, ..., broadcast_logical_xor) have zero gradients.
#include <algorithm>
#include <type_traits>

#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/broadcast_util.h"
#include "op/tensor/zero_gradient.h"
#if MX_USE_CUDA
#include "op/cuda/broadcast_gpu.h"
#include "op/cuda/reduce_gpu.h"
#endif

namespace mx::op {
namespace {

using Kind = BroadcastKind;

void infer_broadcast(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& l = in[0];
  const Shape& r = in[1];
  if (!l.rank_known() || !r.rank_known()) return;
  if (l == r) {
    assign_shape(out[0], l, "output");
    return;
  }
  const int nd = std::max(l.ndim(), r.ndim());
  Shape o = Shape::filled(nd, -1);
  for (int i = 0; i < nd; ++i) {
    const int64_t a = i >= nd - l.ndim() ? l[i - (nd - l.ndim())] : 1;
    const int64_t b = i >= nd - r.ndim() ? r[i - (nd - r.ndim())] : 1;
    if (a < 0 || b < 0) continue;
    if (a != b && a != 1 && b != 1)
      throw ShapeError(str("operands could not be broadcast together with shapes ", l.to_string(),
                           " and ", r.to_string()));
    o[i] = a == 1 ? b : a;
  }
  assign_shape(out[0], o, "output");
}

// fn(k) with k.value the kind as a compile-time constant, for the
// arithmetic kinds; false (fn not called) for the others, which take the
// general loop.
template <typename Fn>
bool with_arithmetic_kind(Kind kind, Fn&& fn) {
  switch (kind) {
    case Kind::kAdd: fn(std::integral_constant<Kind, Kind::kAdd>{}); return true;
    case Kind::kSub: fn(std::integral_constant<Kind, Kind::kSub>{}); return true;
    case Kind::kMul: fn(std::integral_constant<Kind, Kind::kMul>{}); return true;
    case Kind::kDiv: fn(std::integral_constant<Kind, Kind::kDiv>{}); return true;
    case Kind::kMaximum: fn(std::integral_constant<Kind, Kind::kMaximum>{}); return true;
    case Kind::kMinimum: fn(std::integral_constant<Kind, Kind::kMinimum>{}); return true;
    default: return false;
  }
}

template <typename T>
void forward(Kind kind, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const TensorRef& out = c.outputs[0];
  const T* a = c.inputs[0].ptr<T>();
  const T* b = c.inputs[1].ptr<T>();
  T* y = out.ptr<T>();
  const OpReq req = c.req[0];
  BroadcastLayout<2> layout(out.shape, {c.inputs[0].shape, c.inputs[1].shape});
  layout.parallel_runs([&](int64_t o, const auto& off, int64_t len, const auto& st) {
    const T* pa = a + off[0];
    const T* pb = b + off[1];
    // Runs of both operands contiguous (a bias or a mask added to every
    // row): a loop per kind that the compiler vectorises.
    if (st[0] == 1 && st[1] == 1 && req != OpReq::kAdd && with_arithmetic_kind(kind, [&](auto k) {
          for (int64_t j = 0; j < len; ++j) y[o + j] = broadcast_apply(k.value, pa[j], pb[j]);
        }))
      return;
    for (int64_t j = 0; j < len; ++j)
      store(y + o + j, req, broadcast_apply(kind, pa[j * st[0]], pb[j * st[1]]));
  });
}

template <typename T>
void backward(Kind kind, const BackwardCall& c) {
  const TensorRef& g = c.out_grads[0];
  const Shape& out_shape = g.shape;
  const T* gy = g.ptr<T>();
  for (int k = 0; k < 2; ++k) {
    const OpReq req = c.req[static_cast<size_t>(k)];
    if (req == OpReq::kNull) continue;
    const TensorRef& grad = c.in_grads[static_cast<size_t>(k)];
    const bool full = pad_left(grad.shape, out_shape.ndim()) == out_shape;
    // Sums and differences: the gradient is the output's, summed.
    if (kind == Kind::kAdd || kind == Kind::kSub) {
      SumReducer<T> sum;
      sum.scale = kind == Kind::kSub && k == 1 ? -1.0 : 1.0;
      reduce_to(gy, out_shape, grad.ptr<T>(), grad.shape, req, sum);
      continue;
    }
    const T* a = c.inputs[0].ptr<T>();
    const T* b = c.inputs[1].ptr<T>();
    // The element-wise gradient, straight into the input's gradient when it
    // was not broadcast, else into scratch memory and then summed.
    T* dst =
        full ? grad.ptr<T>()
             : static_cast<T*>(c.resources.temp_space(sizeof(T) * static_cast<size_t>(g.size())));
    const OpReq dst_req = full ? req : OpReq::kWrite;
    BroadcastLayout<3> layout(out_shape, {out_shape, c.inputs[0].shape, c.inputs[1].shape});
    layout.parallel_runs([&](int64_t o, const auto& off, int64_t len, const auto& st) {
      const T* pa = a + off[1];
      const T* pb = b + off[2];
      for (int64_t j = 0; j < len; ++j) {
        const T x = pa[j * st[1]], z = pb[j * st[2]];
        store(dst + o + j, dst_req,
              gy[o + j] * (k == 0 ? broadcast_d_lhs(kind, x, z) : broadcast_d_rhs(kind, x, z)));
      }
    });
    if (!full) reduce_to(dst, out_shape, grad.ptr<T>(), grad.shape, req, SumReducer<T>{});
  }
}

#if MX_USE_CUDA
template <typename T>
void forward_gpu(const char* name, Kind kind, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const TensorRef& out = c.outputs[0];
  const BroadcastLayout<2> layout(out.shape, {c.inputs[0].shape, c.inputs[1].shape});
  cuda::broadcast_forward_gpu<T>(name, kind, layout, c.inputs[0].ptr<T>(), c.inputs[1].ptr<T>(),
                                 out.ptr<T>(), out.size(), c.req[0], c.rctx.stream);
}

// As backward(): the element-wise gradient (in scratch memory where the input
// was broadcast), then its sum over the broadcast axes.
template <typename T>
void backward_gpu(const char* name, Kind kind, const BackwardCall& c) {
  const TensorRef& g = c.out_grads[0];
  const Shape& out_shape = g.shape;
  for (int k = 0; k < 2; ++k) {
    const OpReq req = c.req[static_cast<size_t>(k)];
    if (req == OpReq::kNull) continue;
    const TensorRef& grad = c.in_grads[static_cast<size_t>(k)];
    const ReduceIndex to_grad = make_reduce_index(out_shape, grad.shape);
    if (kind == Kind::kAdd || kind == Kind::kSub) {
      const double scale = kind == Kind::kSub && k == 1 ? -1.0 : 1.0;
      cuda::reduce_gpu<T>(name, cuda::ReduceOp::kSum, scale, to_grad, g.ptr<T>(), grad.ptr<T>(),
                          req, c.rctx.stream);
      continue;
    }
    const bool full = pad_left(grad.shape, out_shape.ndim()) == out_shape;
    T* dst =
        full ? grad.ptr<T>()
             : static_cast<T*>(c.resources.temp_space(sizeof(T) * static_cast<size_t>(g.size())));
    const BroadcastLayout<2> layout(out_shape, {c.inputs[0].shape, c.inputs[1].shape});
    cuda::broadcast_grad_gpu<T>(name, kind, k, layout, g.ptr<T>(), c.inputs[0].ptr<T>(),
                                c.inputs[1].ptr<T>(), dst, g.size(), full ? req : OpReq::kWrite,
                                c.rctx.stream);
    if (!full)
      cuda::reduce_gpu<T>(name, cuda::ReduceOp::kSum, 1.0, to_grad, dst, grad.ptr<T>(), req,
                          c.rctx.stream);
  }
}
#endif

void add_backward(OpBuilder<NoParams>& b, const char* name, Kind kind) {
  const bool uses_inputs = kind != Kind::kAdd && kind != Kind::kSub;
  b.resource(ResourceKind::kTempSpace)
      .backward_uses(uses_inputs, false)
      .backward_cpu([kind, name](const NoParams&, const BackwardCall& c) {
        dispatch_real(c.out_grads[0].dtype, name,
                      [&](auto tag) { backward<typename decltype(tag)::type>(kind, c); });
      });
#if MX_USE_CUDA
  b.backward(DeviceKind::kGPU, [kind, name](const NoParams&, const BackwardCall& c) {
    dispatch_real(c.out_grads[0].dtype, name,
                  [&](auto tag) { backward_gpu<typename decltype(tag)::type>(name, kind, c); });
  });
#endif
}

void add(OpRegistry& r, const char* name, Kind kind, const char* what,
         const char* alias = nullptr) {
  auto b = r.add<NoParams>(name).amp(AmpClass::kFloat32);
  if (alias != nullptr) b.alias(alias);
  b.describe(what)
      .inputs({"lhs", "rhs"})
      .infer_shape(infer_broadcast)
      // An addition of two 4-D arrays of one shape broadcasts nothing (ONNX's
      // Add imports as broadcast_add).
      .inference_layer([kind](const NoParams&, const ShapeVector& in,
                              const ShapeVector&) -> std::optional<InferenceLayer> {
        if (kind != Kind::kAdd) return std::nullopt;
        return residual_addition(in[0], in[1]);
      })
      .forward_cpu([kind, name](const NoParams&, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name,
                      [&](auto tag) { forward<typename decltype(tag)::type>(kind, c); });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [kind, name](const NoParams&, const ForwardCall& c) {
    dispatch_real(c.inputs[0].dtype, name,
                  [&](auto tag) { forward_gpu<typename decltype(tag)::type>(name, kind, c); });
  });
#endif
  // The comparisons' gradients are zero (MXNet's MakeZeroGradNodes).
  if (is_logic(kind))
    zero_gradient(b, name);
  else
    add_backward(b, name, kind);
}

// MXNet's comparison and logical operators with broadcasting: 1 where the
// relation holds, else 0, in the inputs' dtype.
void register_logic(OpRegistry& r) {
  add(r, "broadcast_equal", Kind::kEqual, "lhs == rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_not_equal", Kind::kNotEqual, "lhs != rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_greater", Kind::kGreater, "lhs > rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_greater_equal", Kind::kGreaterEqual, "lhs >= rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_lesser", Kind::kLesser, "lhs < rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_lesser_equal", Kind::kLesserEqual, "lhs <= rhs (1 or 0) with broadcasting.");
  add(r, "broadcast_logical_and", Kind::kLogicalAnd,
      "lhs and rhs (1 or 0; nonzero is true) with broadcasting.");
  add(r, "broadcast_logical_or", Kind::kLogicalOr,
      "lhs or rhs (1 or 0; nonzero is true) with broadcasting.");
  add(r, "broadcast_logical_xor", Kind::kLogicalXor,
      "lhs xor rhs (1 or 0; nonzero is true) with broadcasting.");
}

}  // namespace

void register_broadcast_ops(OpRegistry& r) {
  add(r, "broadcast_add", Kind::kAdd, "lhs + rhs with broadcasting.", "broadcast_plus");
  add(r, "broadcast_sub", Kind::kSub, "lhs - rhs with broadcasting.", "broadcast_minus");
  add(r, "broadcast_mul", Kind::kMul, "lhs * rhs with broadcasting.");
  add(r, "broadcast_div", Kind::kDiv, "lhs / rhs with broadcasting.");
  add(r, "broadcast_maximum", Kind::kMaximum, "max(lhs, rhs) with broadcasting.");
  add(r, "broadcast_minimum", Kind::kMinimum, "min(lhs, rhs) with broadcasting.");
  register_logic(r);
}

}  // namespace mx::op
