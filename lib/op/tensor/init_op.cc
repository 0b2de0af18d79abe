// Operators that make arrays from their parameters: _zeros and _ones (the
// begin states of Gluon's exported RNN layers), _arange (the frontends'
// arange) and _contrib_arange_like (a range shaped like its input). Their
// element logic is in init_kernels.h, shared with the GPU kernels.
#include <cmath>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/init_kernels.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

// ---- _zeros, _ones --------------------------------------------------------

struct InitParam : Params<InitParam> {
  Shape shape;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<InitParam>& d) {
    d.field("shape", &InitParam::shape)
        .set_default(Shape::scalar())
        .describe(
            "The shape of the output. A 0 is an unknown dimension (MXNet 1.x's legacy shapes) "
            "that graph shape inference fills from the operators that read the output, as "
            "for the (layers, 0, hidden) begin states of exported Gluon RNN layers.");
    d.field("ctx", &InitParam::ctx)
        .set_default(std::string())
        .describe("Accepted for compatibility; the array lives where its graph runs.");
    d.field("dtype", &InitParam::dtype)
        .set_default(DType::kFloat32)
        .describe("The element type of the output.");
  }
};

// The parameter's shape with MXNet 1.x's unknowns (0, and -1) as -1; an
// empty shape says nothing (unknown rank), as in MXNet.
Shape declared_shape(const Shape& shape) {
  if (shape.ndim() <= 0) return Shape();
  Shape s = shape;
  for (int i = 0; i < s.ndim(); ++i) {
    if (s[i] < -1) throw ShapeError(str("shape ", shape.to_string(), " has a negative dimension"));
    if (s[i] == 0) s[i] = -1;
  }
  return s;
}

void infer_init(const InitParam& p, ShapeVector&, ShapeVector&, ShapeVector& out) {
  assign_shape(out[0], declared_shape(p.shape), "output");
}

void infer_init_type(const InitParam& p, DTypeVector&, DTypeVector&, DTypeVector& out) {
  assign_type(out[0], p.dtype, "output");
}

void fill_cpu(const TensorRef& out, double value, OpReq req) {
  dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (req == OpReq::kNull) return;
    parallel_elements(out.size(), kernels::FillValue<T>{out.ptr<T>(), value, req});
  });
}

void add_fill(OpRegistry& r, const char* name, double value, const char* what) {
  auto b = r.add<InitParam>(name).amp(AmpClass::kFloat32);
  b.describe(what)
      .inputs(std::vector<std::string>{})
      .infer_shape(infer_init)
      .infer_type(infer_init_type)
      .flops([](const InitParam&, const ShapeVector&, const ShapeVector&) { return 0.0; })
      .forward_cpu([value](const InitParam&, const ForwardCall& c) {
        fill_cpu(c.outputs[0], value, c.req[0]);
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [value, name](const InitParam&, const ForwardCall& c) {
    cuda::fill_gpu(c.rctx, name, c.outputs[0], value, c.req[0]);
  });
#endif
}

// ---- _arange ----------------------------------------------------------------

struct ArangeParam : Params<ArangeParam> {
  double start = 0;
  std::optional<double> stop;
  double step = 1;
  int repeat = 1;
  bool infer_range = false;
  std::string ctx;
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<ArangeParam>& d) {
    d.field("start", &ArangeParam::start)
        .describe("The first value; with stop None, the end of the range (which starts at 0).");
    d.field("stop", &ArangeParam::stop)
        .set_default(std::nullopt)
        .describe("The end of the range (not included).");
    d.field("step", &ArangeParam::step).set_default(1.0).describe("The spacing of the values.");
    d.field("repeat", &ArangeParam::repeat)
        .set_default(1)
        .describe("How many times each value repeats.");
    d.field("infer_range", &ArangeParam::infer_range)
        .set_default(false)
        .describe(
            "With stop None: the length comes from the graph (the operators that read the "
            "output), the values start at start.");
    d.field("ctx", &ArangeParam::ctx)
        .set_default(std::string())
        .describe("Accepted for compatibility; the array lives where its graph runs.");
    d.field("dtype", &ArangeParam::dtype)
        .set_default(DType::kFloat32)
        .describe("The element type of the output.");
  }
  static ArangeParam from_strings(const AttrMap& attrs, const std::string& owner) {
    ArangeParam p = Params::from_strings(attrs, owner);
    if (p.step == 0) throw InputError(owner + ": step must not be 0");
    if (p.repeat <= 0) throw InputError(str(owner, ": repeat must be positive, not ", p.repeat));
    return p;
  }
};

// The (start, stop) of the range: stop None means [0, start), except with
// infer_range, where the length comes from the graph.
struct Range {
  double start, stop;
};
std::optional<Range> arange_range(const ArangeParam& p) {
  if (p.stop) return Range{p.start, *p.stop};
  if (p.infer_range) return std::nullopt;
  return Range{0, p.start};
}

double arange_start(const ArangeParam& p) { return p.stop || p.infer_range ? p.start : 0.0; }

void infer_arange(const ArangeParam& p, ShapeVector&, ShapeVector&, ShapeVector& out) {
  const std::optional<Range> range = arange_range(p);
  if (!range) {
    if (out[0].rank_known() && out[0].ndim() != 1)
      throw ShapeError(str("output ", out[0].to_string(), " must have 1 dimension"));
    assign_shape(out[0], Shape{-1}, "output");
    return;
  }
  if (p.step > 0 ? !(range->start < range->stop) : !(range->start > range->stop))
    throw ShapeError(str("invalid range (start, stop, step) = (", range->start, ", ", range->stop,
                         ", ", p.step, "): it holds no value"));
  const double count = std::ceil((range->stop - range->start) / p.step);
  assign_shape(out[0], Shape{static_cast<int64_t>(count) * p.repeat}, "output");
}

// ---- _contrib_arange_like ------------------------------------------------------

struct ArangeLikeParam : Params<ArangeLikeParam> {
  double start = 0;
  double step = 1;
  int repeat = 1;
  std::string ctx;
  std::optional<int> axis;
  static void declare(ParamDecl<ArangeLikeParam>& d) {
    d.field("start", &ArangeLikeParam::start).set_default(0.0).describe("The first value.");
    d.field("step", &ArangeLikeParam::step).set_default(1.0).describe("The spacing of the values.");
    d.field("repeat", &ArangeLikeParam::repeat)
        .set_default(1)
        .describe("How many times each value repeats.");
    d.field("ctx", &ArangeLikeParam::ctx)
        .set_default(std::string())
        .describe("Accepted for compatibility; the array lives where its graph runs.");
    d.field("axis", &ArangeLikeParam::axis)
        .set_default(std::nullopt)
        .describe(
            "A 1-D range as long as this axis of the input; None: a range over all its elements, "
            "in its shape.");
  }
  static ArangeLikeParam from_strings(const AttrMap& attrs, const std::string& owner) {
    ArangeLikeParam p = Params::from_strings(attrs, owner);
    if (p.repeat <= 0) throw InputError(str(owner, ": repeat must be positive, not ", p.repeat));
    return p;
  }
};

void infer_arange_like(const ArangeLikeParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  if (!p.axis) {
    infer_same_shape(in, out);
    return;
  }
  if (!data.rank_known()) return;
  assign_shape(out[0], Shape{data[normalize_axis(*p.axis, data)]}, "output");
}

void arange_cpu(const TensorRef& out, double start, double step, int64_t repeat, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_dtype(out.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    parallel_elements(out.size(), kernels::ArangeFill<T>{out.ptr<T>(), start, step, repeat, req});
  });
}

// The gradient of arange_like's input: 0 (its values are never read).
void zero_grad_cpu(const BackwardCall& c) {
  if (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace)
    fill_cpu(c.in_grads[0], 0, c.req[0]);
}

}  // namespace

void register_init_ops(OpRegistry& r) {
  add_fill(r, "_zeros", 0.0, "An array of zeros of the given shape and dtype.");
  add_fill(r, "_ones", 1.0, "An array of ones of the given shape and dtype.");

  auto arange =
      r.add<ArangeParam>("_arange")
          .amp(AmpClass::kFloat32)
          .alias("arange")
          .describe(
              "Evenly spaced values start, start + step, ... below stop, each repeated repeat "
              "times. Integer dtypes truncate start and step first, as MXNet does; float16 "
              "values are computed through float (MXNet 1.9.1 gives zeros for float16).")
          .inputs(std::vector<std::string>{})
          .infer_shape(infer_arange)
          .infer_type([](const ArangeParam& p, DTypeVector&, DTypeVector&, DTypeVector& out) {
            assign_type(out[0], p.dtype, "output");
          })
          .flops([](const ArangeParam&, const ShapeVector&, const ShapeVector&) { return 0.0; })
          .forward_cpu([](const ArangeParam& p, const ForwardCall& c) {
            arange_cpu(c.outputs[0], arange_start(p), p.step, p.repeat, c.req[0]);
          });

  auto arange_like =
      r.add<ArangeLikeParam>("_contrib_arange_like")
          .amp(AmpClass::kFloat32)
          .describe(
              "Evenly spaced values start, start + step, ... (each repeated repeat times) in the "
              "input's shape and dtype, or as long as one of its axes. The input's values are "
              "not read; its gradient is 0.")
          .inputs({"data"})
          .stops_gradient()
          .infer_shape(infer_arange_like)
          .backward_uses(false, false)
          .flops([](const ArangeLikeParam&, const ShapeVector&, const ShapeVector&) { return 0.0; })
          .forward_cpu([](const ArangeLikeParam& p, const ForwardCall& c) {
            arange_cpu(c.outputs[0], p.start, p.step, p.repeat, c.req[0]);
          })
          .backward_cpu([](const ArangeLikeParam&, const BackwardCall& c) { zero_grad_cpu(c); });

#if MX_USE_CUDA
  arange.forward(DeviceKind::kGPU, [](const ArangeParam& p, const ForwardCall& c) {
    cuda::arange_gpu(c.rctx, "_arange", c.outputs[0], arange_start(p), p.step, p.repeat, c.req[0]);
  });
  arange_like.forward(DeviceKind::kGPU, [](const ArangeLikeParam& p, const ForwardCall& c) {
    cuda::arange_gpu(c.rctx, "_contrib_arange_like", c.outputs[0], p.start, p.step, p.repeat,
                     c.req[0]);
  });
  arange_like.backward(DeviceKind::kGPU, [](const ArangeLikeParam&, const BackwardCall& c) {
    if (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace)
      cuda::zero_gpu(c.rctx, "_contrib_arange_like", c.in_grads[0]);
  });
#else
  (void)arange, (void)arange_like;
#endif
}

}  // namespace mx::op
