// Operators that repeat the input's elements: tile, repeat, broadcast_to,
// broadcast_like and broadcast_axis (alias broadcast_axes). Each output is a
// strided view of the input with zero strides on the repeated axes
// (shape_kernels.h), for every element type; each gradient sums the
// output's gradient over those axes (reduce_to, float32 and float64).
#include <algorithm>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/broadcast_util.h"
#include "op/tensor/shape_util.h"
#if MX_USE_CUDA
#include "op/cuda/reduce_gpu.h"
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

// An output that repeats its input: the view that reads it and, for the
// gradient, the output's elements seen as `big` summed down to `small`.
struct RepeatView {
  kernels::StridedIndex index;
  Shape big, small;
};

// Builds a RepeatView from axes of (size, input stride, repeated): repeated
// axes have input stride 0 and are summed by the gradient. Neighbouring
// axes of one kind merge, so the gradient's shapes stay within Shape's rank.
class RepeatViewBuilder {
 public:
  void axis(int64_t size, int64_t stride, bool repeated) {
    dims_.push_back(size);
    strides_.push_back(repeated ? 0 : stride);
    if (size == 1) return;
    if (!big_.empty() && last_repeated_ == repeated) {
      big_.back() *= size;
      small_.back() *= repeated ? 1 : size;
      return;
    }
    big_.push_back(size);
    small_.push_back(repeated ? 1 : size);
    last_repeated_ = repeated;
  }
  RepeatView build(const char* op) const {
    if (big_.size() > static_cast<size_t>(Shape::kMaxNdim))
      throw Error(str(op, ": the gradient supports at most ", Shape::kMaxNdim,
                      " alternating repeated and kept axes"));
    return {kernels::strided_index(dims_, strides_), big_.empty() ? Shape{1} : Shape(big_),
            small_.empty() ? Shape{1} : Shape(small_)};
  }

 private:
  std::vector<int64_t> dims_, strides_, big_, small_;
  bool last_repeated_ = false;
};

void gather_cpu(const RepeatView& v, const ForwardCall& c) {
  dispatch_dtype(c.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    strided_gather(c.outputs[0].ptr<T>(), c.inputs[0].ptr<T>(), v.index, c.outputs[0].size(),
                   c.req[0]);
  });
}

void sum_back_cpu(const RepeatView& v, const BackwardCall& c, const char* op) {
  if (c.req[0] == OpReq::kNull) return;
  dispatch_real(c.in_grads[0].dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_to(c.out_grads[0].ptr<T>(), v.big, c.in_grads[0].ptr<T>(), v.small, c.req[0],
              SumReducer<T>{});
  });
}

#if MX_USE_CUDA
void gather_gpu(const RepeatView& v, const ForwardCall& c, const char* op) {
  cuda::strided_gather_gpu(c.rctx, op, c.inputs[0].dtype, c.outputs[0].data, c.inputs[0].data,
                           v.index, c.outputs[0].size(), c.req[0]);
}

void sum_back_gpu(const RepeatView& v, const BackwardCall& c, const char* op) {
  if (c.req[0] == OpReq::kNull) return;
  dispatch_real(c.in_grads[0].dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    cuda::reduce_gpu<T>(op, cuda::ReduceOp::kSum, 1.0, make_reduce_index(v.big, v.small),
                        c.out_grads[0].ptr<T>(), c.in_grads[0].ptr<T>(), c.req[0], c.rctx.stream);
  });
}
#endif

// ---- tile ----------------------------------------------------------------

struct TileParam : Params<TileParam> {
  IntTuple reps;
  static void declare(ParamDecl<TileParam>& d) {
    d.field("reps", &TileParam::reps)
        .describe(
            "How many times to repeat the input along each axis; a shorter tuple is padded "
            "with 1s on the left, a longer one pads the input's shape.");
  }
  static TileParam from_strings(const AttrMap& attrs, const std::string& owner) {
    TileParam p = Params::from_strings(attrs, owner);
    for (int64_t r : p.reps.values)
      if (r <= 0)
        throw InputError(str(owner, ": reps ", p.reps.to_string(), " must be positive integers"));
    return p;
  }
};

// The input's shape and reps, both padded on the left to the output's rank.
std::pair<Shape, std::vector<int64_t>> tile_operands(const TileParam& p, const Shape& data) {
  const int n = std::max(data.ndim(), p.reps.size());
  std::vector<int64_t> reps(static_cast<size_t>(n - p.reps.size()), 1);
  for (int64_t r : p.reps.values) reps.push_back(r);
  return {pad_left(data, n), reps};
}

void infer_tile(const TileParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  auto [padded, reps] = tile_operands(p, data);
  Shape o = padded;
  for (int i = 0; i < o.ndim(); ++i) o[i] = o[i] < 0 ? -1 : o[i] * reps[static_cast<size_t>(i)];
  assign_shape(out[0], o, "output");
  // Unknown input sizes follow from the output's.
  const int lead = o.ndim() - data.ndim();
  for (int i = 0; i < data.ndim(); ++i)
    if (data[i] < 0 && out[0][i + lead] >= 0)
      data[i] = out[0][i + lead] / reps[static_cast<size_t>(i + lead)];
}

RepeatView tile_view(const TileParam& p, const Shape& data) {
  auto [padded, reps] = tile_operands(p, data);
  const std::vector<int64_t> strides = kernels::contiguous_strides(padded);
  RepeatViewBuilder b;
  for (int i = 0; i < padded.ndim(); ++i) {
    const auto u = static_cast<size_t>(i);
    b.axis(reps[u], 0, true);
    b.axis(padded[i], strides[u], false);
  }
  return b.build("tile");
}

// ---- repeat ----------------------------------------------------------------

struct RepeatParam : Params<RepeatParam> {
  int repeats = 0;
  std::optional<int> axis;
  static void declare(ParamDecl<RepeatParam>& d) {
    d.field("repeats", &RepeatParam::repeats)
        .set_lower_bound(0)
        .describe("How many times each element repeats.");
    d.field("axis", &RepeatParam::axis)
        .set_default(std::nullopt)
        .describe(
            "The axis along which to repeat (may be negative); None repeats the "
            "elements of the flattened input into a 1-D output.");
  }
};

void infer_repeat(const RepeatParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  if (!p.axis) {
    assign_shape(out[0], Shape{data.is_known() ? data.size() * p.repeats : -1}, "output");
    return;
  }
  const int axis = normalize_axis(*p.axis, data);
  Shape o = data;
  if (o[axis] >= 0) o[axis] *= p.repeats;
  assign_shape(out[0], o, "output");
}

RepeatView repeat_view(const RepeatParam& p, const Shape& data) {
  int64_t outer = 1, size = data.size(), inner = 1;
  if (p.axis) {
    const int axis = normalize_axis(*p.axis, data);
    outer = data.prod(0, axis);
    size = data[axis];
    inner = data.prod(axis + 1, data.ndim());
  }
  RepeatViewBuilder b;
  b.axis(outer, size * inner, false);
  b.axis(size, inner, false);
  b.axis(p.repeats, 0, true);
  b.axis(inner, 1, false);
  return b.build("repeat");
}

// ---- broadcast_to, broadcast_like, broadcast_axis --------------------------------

// The view of `data` broadcast to `out` (same rank; data's axes 1 or equal).
RepeatView broadcast_view(const Shape& data, const Shape& out) {
  const std::vector<int64_t> strides = kernels::contiguous_strides(data);
  RepeatViewBuilder b;
  for (int i = 0; i < out.ndim(); ++i)
    b.axis(out[i], strides[static_cast<size_t>(i)], data[i] != out[i]);
  return b.build("broadcast");
}

// Checks that data broadcasts to `target` (same rank, each axis 1 or equal;
// unknown target axes take data's) and fills out[0].
void broadcast_into(const Shape& data, Shape target, Shape& out, const std::string& to_text) {
  if (data.ndim() != target.ndim())
    throw ShapeError(str("input of shape ", data.to_string(), " cannot be broadcast to ", to_text));
  for (int i = 0; i < data.ndim(); ++i) {
    if (target[i] < 0) {
      target[i] = data[i];
    } else if (data[i] >= 0 && data[i] != 1 && data[i] != target[i]) {
      throw ShapeError(str("input of shape ", data.to_string(), " cannot be broadcast to ", to_text,
                           ": axis ", i, " has size ", data[i], ", not 1 or ", target[i]));
    }
  }
  assign_shape(out, target, "output");
}

struct BroadcastToParam : Params<BroadcastToParam> {
  Shape shape;
  static void declare(ParamDecl<BroadcastToParam>& d) {
    d.field("shape", &BroadcastToParam::shape)
        .set_default(Shape::scalar())
        .describe("The output's shape (same rank as the input); 0 keeps the input's size.");
  }
};

void infer_broadcast_to(const BroadcastToParam& p, ShapeVector& in, ShapeVector&,
                        ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  Shape target = p.shape;
  for (int i = 0; i < target.ndim(); ++i) {
    if (target[i] < 0)
      throw ShapeError(str("shape ", p.shape.to_string(), " has a negative dimension"));
    if (target[i] == 0) target[i] = i < data.ndim() ? data[i] : -1;
  }
  broadcast_into(data, target, out[0], p.shape.to_string());
}

struct BroadcastLikeParam : Params<BroadcastLikeParam> {
  std::optional<IntTuple> lhs_axes, rhs_axes;
  static void declare(ParamDecl<BroadcastLikeParam>& d) {
    d.field("lhs_axes", &BroadcastLikeParam::lhs_axes)
        .set_default(std::nullopt)
        .describe("Axes of lhs (size 1) to broadcast; None: all of rhs's shape.");
    d.field("rhs_axes", &BroadcastLikeParam::rhs_axes)
        .set_default(std::nullopt)
        .describe("The axes of rhs whose sizes lhs_axes take, in the same order.");
  }
};

void infer_broadcast_like(const BroadcastLikeParam& p, ShapeVector& in, ShapeVector&,
                          ShapeVector& out) {
  const Shape &lhs = in[0], &rhs = in[1];
  if (!lhs.rank_known() || !rhs.rank_known()) return;
  if (!p.lhs_axes || !p.rhs_axes) {
    broadcast_into(lhs, rhs, out[0], rhs.to_string());
    return;
  }
  if (p.lhs_axes->size() != p.rhs_axes->size())
    throw ShapeError(str("lhs_axes ", p.lhs_axes->to_string(), " and rhs_axes ",
                         p.rhs_axes->to_string(), " must have the same length"));
  if (p.lhs_axes->empty()) throw ShapeError("lhs_axes and rhs_axes must not be empty");
  Shape o = lhs;
  for (int i = 0; i < p.lhs_axes->size(); ++i) {
    const int from = normalize_axis((*p.lhs_axes)[i], lhs);
    const int to = normalize_axis((*p.rhs_axes)[i], rhs);
    if (lhs[from] >= 0 && lhs[from] != 1)
      throw ShapeError(str("axis ", from, " of lhs ", lhs.to_string(), " has size ", lhs[from],
                           ", not 1: it cannot be broadcast to axis ", to, " of rhs ",
                           rhs.to_string()));
    o[from] = rhs[to];
  }
  assign_shape(out[0], o, "output");
}

struct BroadcastAxisParam : Params<BroadcastAxisParam> {
  IntTuple axis, size;
  static void declare(ParamDecl<BroadcastAxisParam>& d) {
    d.field("axis", &BroadcastAxisParam::axis)
        .set_default(IntTuple())
        .describe(
            "The axes (of size 1) to broadcast; negative axes count from the end "
            "(MXNet 1.9.1 refuses them).");
    d.field("size", &BroadcastAxisParam::size)
        .set_default(IntTuple())
        .describe("The size each of those axes gets.");
  }
  static BroadcastAxisParam from_strings(const AttrMap& attrs, const std::string& owner) {
    BroadcastAxisParam p = Params::from_strings(attrs, owner);
    if (p.axis.size() != p.size.size())
      throw InputError(str(owner, ": axis ", p.axis.to_string(), " and size ", p.size.to_string(),
                           " must have the same length"));
    for (int64_t s : p.size.values)
      if (s < 0) throw InputError(str(owner, ": size ", p.size.to_string(), " is negative"));
    return p;
  }
};

void infer_broadcast_axis(const BroadcastAxisParam& p, ShapeVector& in, ShapeVector&,
                          ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  Shape o = data;
  for (int i = 0; i < p.axis.size(); ++i) {
    const int a = normalize_axis(p.axis[i], data);
    if (o[a] >= 0 && o[a] != 1)
      throw ShapeError(str("axis ", a, " of input ", data.to_string(), " has size ", o[a],
                           ", not 1: it cannot be broadcast",
                           data[a] == 1 ? " (it appears twice in axis)" : ""));
    o[a] = p.size[i];
  }
  assign_shape(out[0], o, "output");
}

// Registers one of the operators above: a view forward, a summing backward.
template <typename P>
OpBuilder<P> add_repeat_op(OpRegistry& r, const char* name,
                           RepeatView (*view)(const P&, const ShapeVector& in_shapes,
                                              const Shape& out_shape)) {
  auto b = r.add<P>(name).amp(AmpClass::kFloat32);
  b.backward_uses(false, false)
      .forward_cpu([view](const P& p, const ForwardCall& c) {
        gather_cpu(view(p, {c.inputs[0].shape}, c.outputs[0].shape), c);
      })
      .backward_cpu([view, name](const P& p, const BackwardCall& c) {
        sum_back_cpu(view(p, {c.in_grads[0].shape}, c.out_grads[0].shape), c, name);
        // broadcast_like: rhs only gives its shape; its gradient is 0.
        if (c.in_grads.size() > 1 && c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)
          dispatch_dtype(c.in_grads[1].dtype, [&](auto tag) {
            using T = typename decltype(tag)::type;
            std::fill_n(c.in_grads[1].ptr<T>(), c.in_grads[1].size(), T(0.0f));
          });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [view, name](const P& p, const ForwardCall& c) {
     gather_gpu(view(p, {c.inputs[0].shape}, c.outputs[0].shape), c, name);
   }).backward(DeviceKind::kGPU, [view, name](const P& p, const BackwardCall& c) {
    sum_back_gpu(view(p, {c.in_grads[0].shape}, c.out_grads[0].shape), c, name);
    if (c.in_grads.size() > 1 && c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)
      cuda::zero_gpu(c.rctx, name, c.in_grads[1]);
  });
#endif
  return b;
}

}  // namespace

void register_repeat_ops(OpRegistry& r) {
  add_repeat_op<TileParam>(
      r, "tile",
      [](const TileParam& p, const ShapeVector& in, const Shape&) { return tile_view(p, in[0]); })
      .describe("Repeats the whole input reps[i] times along each axis i.")
      .inputs({"data"})
      .infer_shape(infer_tile);
  add_repeat_op<RepeatParam>(r, "repeat",
                             [](const RepeatParam& p, const ShapeVector& in, const Shape&) {
                               return repeat_view(p, in[0]);
                             })
      .describe("Repeats each element `repeats` times along an axis (or of the flattened input).")
      .inputs({"data"})
      .infer_shape(infer_repeat);
  add_repeat_op<BroadcastToParam>(r, "broadcast_to",
                                  [](const BroadcastToParam&, const ShapeVector& in,
                                     const Shape& out) { return broadcast_view(in[0], out); })
      .describe("Broadcasts the input's size-1 axes to a given shape.")
      .inputs({"data"})
      .infer_shape(infer_broadcast_to);
  add_repeat_op<BroadcastLikeParam>(r, "broadcast_like",
                                    [](const BroadcastLikeParam&, const ShapeVector& in,
                                       const Shape& out) { return broadcast_view(in[0], out); })
      .describe(
          "Broadcasts lhs to the shape of rhs (or some of its axes to some of rhs's); rhs's "
          "gradient is 0.")
      .inputs({"lhs", "rhs"})
      .infer_shape(infer_broadcast_like)
      .infer_type([](const BroadcastLikeParam&, DTypeVector& in, DTypeVector&, DTypeVector& out) {
        // rhs gives only its shape: its type is free, as in MXNet.
        assign_type(out[0], in[0], "output");
        assign_type(in[0], out[0], "input 'lhs'");
        if (!in[1]) in[1] = in[0];
      });
  add_repeat_op<BroadcastAxisParam>(r, "broadcast_axis",
                                    [](const BroadcastAxisParam&, const ShapeVector& in,
                                       const Shape& out) { return broadcast_view(in[0], out); })
      .alias("broadcast_axes")
      .describe("Broadcasts the input's size-1 axes `axis` to the sizes `size`.")
      .inputs({"data"})
      .infer_shape(infer_broadcast_axis);
}

}  // namespace mx::op
