// Operators that change how an array is laid out, not its values: Flatten,
// Reshape (with MXNet's special codes), transpose, expand_dims and slice_axis.
// They work for every element type; the gradient moves back the same way.
#include <algorithm>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/tensor_util.h"
#include "op/tensor/transpose.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

// Fills the one unknown dimension of `in` (rank known) from the element count
// of a fully known `out`, as MXNet's ReverseReshapeInferShape.
void infer_input_from_size(Shape& in, const Shape& out) {
  if (!in.rank_known() || in.is_known() || !out.is_known()) return;
  int unknown = -1;
  int64_t known = 1;
  for (int i = 0; i < in.ndim(); ++i) {
    if (in[i] >= 0) {
      known *= in[i];
    } else if (unknown >= 0) {
      return;  // two unknowns: nothing to say
    } else {
      unknown = i;
    }
  }
  if (known == 0 || out.size() % known != 0)
    throw ShapeError(str("input of shape ", in.to_string(), " cannot hold the ", out.size(),
                         " elements of output ", out.to_string()));
  in[unknown] = out.size() / known;
}

void check_same_size(const Shape& in, const Shape& out) {
  if (in.is_known() && out.is_known() && in.size() != out.size())
    throw ShapeError(str("cannot reshape input of shape ", in.to_string(), " (", in.size(),
                         " elements) to ", out.to_string(), " (", out.size(), " elements)"));
}

// Copies every element (forward) or every gradient (backward) unchanged.
void copy_data(const TensorRef& dst, const TensorRef& src, OpReq req) {
  dispatch_dtype(src.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_all(dst.ptr<T>(), src.ptr<T>(), src.size(), req);
  });
}

void copy_forward(const ForwardCall& c) { copy_data(c.outputs[0], c.inputs[0], c.req[0]); }
void copy_backward(const BackwardCall& c) { copy_data(c.in_grads[0], c.out_grads[0], c.req[0]); }

// ---- Flatten ----------------------------------------------------------------

void infer_flatten(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  if (data.ndim() == 0) throw ShapeError("input 'data' must have at least 1 dimension");
  int64_t rest = 1;
  for (int i = 1; i < data.ndim(); ++i) rest = (rest < 0 || data[i] < 0) ? -1 : rest * data[i];
  assign_shape(out[0], Shape{data[0], rest}, "output");
  if (data[0] < 0 && out[0][0] >= 0) data[0] = out[0][0];
  infer_input_from_size(data, out[0]);
}

// ---- Reshape ----------------------------------------------------------------

struct ReshapeParam : Params<ReshapeParam> {
  IntTuple shape;
  bool reverse = false;
  Shape target_shape;
  bool keep_highest = false;
  static void declare(ParamDecl<ReshapeParam>& d) {
    d.field("shape", &ReshapeParam::shape)
        .set_default(IntTuple())
        .describe(
            "The target shape. 0 copies an input dimension, -1 infers one dimension from the "
            "rest, -2 copies all remaining input dimensions, -3 merges two input dimensions, "
            "-4 splits one input dimension into the two that follow.");
    d.field("reverse", &ReshapeParam::reverse)
        .set_default(false)
        .describe("Match the special codes from right to left.");
    d.field("target_shape", &ReshapeParam::target_shape)
        .set_default(Shape::scalar())
        .describe("(Deprecated, use shape) target shape; a 0 is inferred.");
    d.field("keep_highest", &ReshapeParam::keep_highest)
        .set_default(false)
        .describe("(Deprecated, use shape) with target_shape: keep the first dimension.");
  }
};

// MXNet's InferReshapeShape: the target shape from the codes in `spec` and
// the (partly known) input shape; unknown results are -1.
Shape reshape_target(const IntTuple& spec, const Shape& in, bool reverse) {
  std::vector<int64_t> src(in.begin(), in.end());
  std::vector<int64_t> codes = spec.values;
  if (reverse) {
    std::reverse(src.begin(), src.end());
    std::reverse(codes.begin(), codes.end());
  }
  auto fail = [&](const std::string& why) {
    return ShapeError(str("shape ", spec.to_string(), " does not fit input of shape ",
                          in.to_string(), ": ", why));
  };
  std::vector<int64_t> dims;
  size_t next = 0;  // the next input dimension
  int infer = -1;
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t code = codes[i];
    if (code == 0) {
      if (next >= src.size()) throw fail("code 0 has no input dimension left to copy");
      dims.push_back(src[next++]);
    } else if (code == -1) {
      if (infer >= 0) throw fail("only one dimension can be -1");
      infer = static_cast<int>(dims.size());
      dims.push_back(1);
      ++next;
    } else if (code == -2) {
      while (next < src.size()) dims.push_back(src[next++]);
    } else if (code == -3) {
      if (next + 1 >= src.size()) throw fail("code -3 needs two input dimensions to merge");
      const int64_t d1 = src[next++], d2 = src[next++];
      dims.push_back(d1 < 0 || d2 < 0 ? -1 : d1 * d2);
    } else if (code == -4) {
      if (i + 2 >= codes.size()) throw fail("code -4 must be followed by two dimensions");
      if (next >= src.size()) throw fail("code -4 has no input dimension left to split");
      const int64_t d0 = src[next++];
      int64_t d1 = codes[++i], d2 = codes[++i];
      if (d1 == -1 && d2 == -1) throw fail("the two dimensions after -4 cannot both be -1");
      if (d1 < -1 || d2 < -1 || d1 == 0 || d2 == 0)
        throw fail("the two dimensions after -4 must be positive or -1");
      if (d0 >= 0) {
        if (d1 == -1) d1 = d2 > 0 && d0 % d2 == 0 ? d0 / d2 : -2;
        if (d2 == -1) d2 = d1 > 0 && d0 % d1 == 0 ? d0 / d1 : -2;
        if (d1 < 0 || d2 < 0 || d1 * d2 != d0)
          throw fail(
              str("-4 cannot split input dimension ", d0, " into ", codes[i - 1], " x ", codes[i]));
      }
      dims.push_back(d1);
      dims.push_back(d2);
    } else if (code > 0) {
      dims.push_back(code);
      ++next;
    } else {
      throw fail(str("invalid code ", code, " (codes are 0, -1, -2, -3 and -4)"));
    }
  }
  if (infer >= 0) {
    if (in.is_known()) {
      int64_t rest = 1;
      for (int64_t d : dims) rest *= d;
      if (rest == 0 || in.size() % rest != 0)
        throw fail(str("the ", in.size(),
                       " input elements do not divide into the other "
                       "dimensions"));
      dims[static_cast<size_t>(infer)] = in.size() / rest;
    } else {
      dims[static_cast<size_t>(infer)] = -1;
    }
  }
  if (reverse) std::reverse(dims.begin(), dims.end());
  return Shape(dims);
}

// The deprecated target_shape/keep_highest form: 0 marks the inferred dim.
Shape legacy_target(const ReshapeParam& p, const Shape& in) {
  Shape out = p.target_shape;
  const int start = p.keep_highest ? 1 : 0;
  if (p.keep_highest) out[0] = in[0];
  int zeros = 0, zero_at = -1;
  for (int i = start; i < out.ndim(); ++i) {
    if (out[i] == 0) {
      ++zeros;
      zero_at = i;
    }
  }
  if (zeros == 1) {
    out[zero_at] = 1;
    const int64_t rest = out.prod(0, out.ndim());
    out[zero_at] = in.is_known() && rest > 0 && in.size() % rest == 0 ? in.size() / rest : -1;
  }
  return out;
}

void infer_reshape(const ReshapeParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  const bool legacy = p.target_shape.rank_known() && p.target_shape.ndim() > 0;
  if (p.shape.empty() && !legacy) {
    // No target: the output's shape (from elsewhere in the graph) decides.
    infer_input_from_size(data, out[0]);
    check_same_size(data, out[0]);
    return;
  }
  if (!p.shape.empty() && legacy)
    throw ShapeError("give either shape or the deprecated target_shape, not both");
  const Shape target = legacy ? legacy_target(p, data) : reshape_target(p.shape, data, p.reverse);
  infer_input_from_size(data, target);
  check_same_size(data, target);
  assign_shape(out[0], target, "output");
  infer_input_from_size(data, out[0]);
  check_same_size(data, out[0]);
}

// ---- transpose ----------------------------------------------------------------

struct TransposeParam : Params<TransposeParam> {
  IntTuple axes;
  static void declare(ParamDecl<TransposeParam>& d) {
    d.field("axes", &TransposeParam::axes)
        .set_default(IntTuple())
        .describe("The order of the input axes in the output; empty reverses them.");
  }
};

// Output axis i is input axis perm[i].
std::vector<int> permutation(const TransposeParam& p, int ndim) {
  std::vector<int> perm(static_cast<size_t>(ndim));
  if (p.axes.empty()) {
    for (int i = 0; i < ndim; ++i) perm[static_cast<size_t>(i)] = ndim - 1 - i;
    return perm;
  }
  if (p.axes.size() != ndim)
    throw ShapeError(str("axes ", p.axes.to_string(), " has ", p.axes.size(),
                         " entries but the array has ", ndim, " dimensions"));
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int i = 0; i < ndim; ++i) {
    const int a = normalize_axis(p.axes[i], ndim);
    if (seen[static_cast<size_t>(a)])
      throw ShapeError(
          str("axes ", p.axes.to_string(), " is not a permutation: axis ", a, " appears twice"));
    seen[static_cast<size_t>(a)] = true;
    perm[static_cast<size_t>(i)] = a;
  }
  return perm;
}

void infer_transpose(const TransposeParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (data.rank_known() && out[0].rank_known() && data.ndim() != out[0].ndim())
    throw ShapeError(
        str("input ", data.to_string(), " and output ", out[0].to_string(), " differ in rank"));
  const int ndim = data.rank_known() ? data.ndim() : out[0].ndim();
  if (ndim < 0) return;
  const std::vector<int> perm = permutation(p, ndim);
  Shape from_out = Shape::filled(ndim, -1), from_in = Shape::filled(ndim, -1);
  for (int i = 0; i < ndim; ++i) {
    const int a = perm[static_cast<size_t>(i)];
    if (data.rank_known()) from_in[i] = data[a];
    if (out[0].rank_known()) from_out[a] = out[0][i];
  }
  assign_shape(data, from_out, "input 'data'");
  assign_shape(out[0], from_in, "output");
}

// ---- expand_dims ----------------------------------------------------------------

struct ExpandDimsParam : Params<ExpandDimsParam> {
  int axis = 0;
  static void declare(ParamDecl<ExpandDimsParam>& d) {
    d.field("axis", &ExpandDimsParam::axis)
        .describe("Where the new axis goes, in [-ndim - 1, ndim].");
  }
};

void infer_expand_dims(const ExpandDimsParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  const int ndim = data.rank_known() ? data.ndim() : out[0].ndim() - 1;
  if (ndim < 0) return;
  if (p.axis < -ndim - 1 || p.axis > ndim)
    throw ShapeError(str("axis ", p.axis, " is out of range [", -ndim - 1, ", ", ndim,
                         "] for an input of ", ndim, " dimensions"));
  const int axis = p.axis < 0 ? p.axis + ndim + 1 : p.axis;
  if (out[0].rank_known()) {
    if (out[0].ndim() != ndim + 1)
      throw ShapeError(str("output ", out[0].to_string(), " must have ", ndim + 1, " dimensions"));
    std::vector<int64_t> dims = out[0].to_vector();
    if (dims[static_cast<size_t>(axis)] > 1)
      throw ShapeError(str("output ", out[0].to_string(), " must have size 1 on axis ", axis));
    dims.erase(dims.begin() + axis);
    assign_shape(data, Shape(dims), "input 'data'");
  }
  if (data.rank_known()) {
    std::vector<int64_t> dims = data.to_vector();
    dims.insert(dims.begin() + axis, 1);
    assign_shape(out[0], Shape(dims), "output");
  }
}

// ---- slice_axis ----------------------------------------------------------------

struct SliceAxisParam : Params<SliceAxisParam> {
  int axis = 0;
  int64_t begin = 0;
  std::optional<int64_t> end;
  static void declare(ParamDecl<SliceAxisParam>& d) {
    d.field("axis", &SliceAxisParam::axis).describe("The axis to slice; may be negative.");
    d.field("begin", &SliceAxisParam::begin)
        .describe("The first index of the slice; negative counts from the end.");
    d.field("end", &SliceAxisParam::end)
        .describe("One past the last index; negative counts from the end, None is the end.");
  }
};

// [begin, end) on an axis of size `size`, with MXNet's checks.
std::pair<int64_t, int64_t> slice_range(const SliceAxisParam& p, int64_t size) {
  if (size == 0) return {0, 0};
  int64_t begin = p.begin < 0 ? p.begin + size : p.begin;
  int64_t end = !p.end ? size : (*p.end < 0 ? *p.end + size : *p.end);
  auto end_text = [&] { return p.end ? std::to_string(*p.end) : std::string("None"); };
  if (begin < 0 || begin >= size)
    throw ShapeError(
        str("begin ", p.begin, " is out of range for axis ", p.axis, " of size ", size));
  if (end < 0 || end > size)
    throw ShapeError(
        str("end ", end_text(), " is out of range for axis ", p.axis, " of size ", size));
  if (begin >= end)
    throw ShapeError(str("begin ", p.begin, " must come before end ", end_text(), " on axis ",
                         p.axis, " of size ", size));
  return {begin, end};
}

void infer_slice_axis(const SliceAxisParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  const int ndim = data.rank_known() ? data.ndim() : out[0].ndim();
  if (ndim < 0) return;
  const int axis = normalize_axis(p.axis, data.rank_known() ? data : out[0]);
  // Every other axis passes through, in both directions.
  if (out[0].rank_known()) {
    Shape back = out[0];
    back[axis] = -1;
    assign_shape(data, back, "input 'data'");
  }
  if (!data.rank_known()) return;
  Shape o = data;
  if (data[axis] >= 0) {
    auto [begin, end] = slice_range(p, data[axis]);
    o[axis] = end - begin;
  } else {
    o[axis] = p.begin >= 0 && p.end && *p.end > p.begin ? *p.end - p.begin : -1;
  }
  assign_shape(out[0], o, "output");
}

// (outer, axis size, inner) of `shape` around `axis`.
struct AxisSplit {
  int64_t outer, size, inner;
};
AxisSplit split_at(const Shape& shape, int axis) {
  return {shape.prod(0, axis), shape[axis], shape.prod(axis + 1, shape.ndim())};
}

#if MX_USE_CUDA
// The reshaping operators on the GPU: one device copy (none in place).
void copy_forward_gpu(const ForwardCall& c, const char* op) {
  cuda::copy_gpu(c.rctx, op, c.outputs[0], c.inputs[0], c.req[0]);
}
void copy_backward_gpu(const BackwardCall& c, const char* op) {
  cuda::copy_gpu(c.rctx, op, c.in_grads[0], c.out_grads[0], c.req[0]);
}

void slice_axis_forward_gpu(const SliceAxisParam& p, const ForwardCall& c) {
  const Shape& shape = c.inputs[0].shape;
  const AxisSplit s = split_at(shape, normalize_axis(p.axis, shape));
  const auto [begin, end] = slice_range(p, s.size);
  cuda::copy_row_blocks_gpu(
      c.rctx, "slice_axis", c.inputs[0].dtype, c.outputs[0].data, c.inputs[0].data,
      kernels::part_to_dense(s.outer, s.size * s.inner, begin * s.inner, (end - begin) * s.inner),
      c.req[0]);
}

void slice_axis_backward_gpu(const SliceAxisParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const Shape& shape = c.in_grads[0].shape;
  const AxisSplit s = split_at(shape, normalize_axis(p.axis, shape));
  const auto [begin, end] = slice_range(p, s.size);
  // Outside the slice the gradient is zero (kept as is when adding).
  if (c.req[0] != OpReq::kAdd) cuda::zero_gpu(c.rctx, "slice_axis", c.in_grads[0]);
  cuda::copy_row_blocks_gpu(
      c.rctx, "slice_axis", c.in_grads[0].dtype, c.in_grads[0].data, c.out_grads[0].data,
      kernels::dense_to_part(s.outer, s.size * s.inner, begin * s.inner, (end - begin) * s.inner),
      c.req[0] == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite);
}
#endif

// The permutation that undoes `perm`.
std::vector<int> inverse_permutation(const std::vector<int>& perm) {
  std::vector<int> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[static_cast<size_t>(perm[i])] = static_cast<int>(i);
  return inverse;
}

// slice_axis on the CPU: the slice's blocks copied out, and back into a
// gradient that is zero elsewhere.
void slice_axis_forward(const SliceAxisParam& p, const ForwardCall& c) {
  const Shape& shape = c.inputs[0].shape;
  const int axis = normalize_axis(p.axis, shape);
  const AxisSplit s = split_at(shape, axis);
  // Not a structured binding: clang 14 cannot capture those in the lambda below.
  const auto range = slice_range(p, s.size);
  const int64_t begin = range.first, end = range.second;
  dispatch_dtype(c.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_blocks(c.outputs[0].ptr<T>(), (end - begin) * s.inner,
                c.inputs[0].ptr<T>() + begin * s.inner, s.size * s.inner, s.outer,
                (end - begin) * s.inner, c.req[0]);
  });
}

void slice_axis_backward(const SliceAxisParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const Shape& shape = c.in_grads[0].shape;
  const int axis = normalize_axis(p.axis, shape);
  const AxisSplit s = split_at(shape, axis);
  // Not a structured binding: clang 14 cannot capture those in the lambda below.
  const auto range = slice_range(p, s.size);
  const int64_t begin = range.first, end = range.second;
  dispatch_dtype(c.in_grads[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* grad = c.in_grads[0].ptr<T>();
    // Outside the slice the gradient is zero (kept as is when adding).
    if (c.req[0] != OpReq::kAdd) std::fill(grad, grad + shape.size(), T(0.0f));
    copy_blocks(grad + begin * s.inner, s.size * s.inner, c.out_grads[0].ptr<T>(),
                (end - begin) * s.inner, s.outer, (end - begin) * s.inner,
                c.req[0] == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite);
  });
}

}  // namespace

// Flatten and Reshape copy bytes whatever their type, so they follow their
// input (MXNet's lists keep them in float32, at the cost of a cast pair).
void register_matrix_ops(OpRegistry& r) {
  auto flatten =
      r.add<NoParams>("Flatten")
          .amp(AmpClass::kFollow)
          .alias("flatten")
          .describe("Flattens all axes but the first: (d1, d2, ..., dk) -> (d1, d2 * ... * dk).")
          .inputs({"data"})
          .infer_shape(infer_flatten)
          .inplace({{0, 0}})
          .backward_uses(false, false)
          .forward_cpu([](const NoParams&, const ForwardCall& c) { copy_forward(c); })
          .backward_cpu([](const NoParams&, const BackwardCall& c) { copy_backward(c); });

  auto reshape =
      r.add<ReshapeParam>("Reshape")
          .amp(AmpClass::kFollow)
          .alias("reshape")
          .describe("Gives the input a new shape with the same number of elements.")
          .inputs({"data"})
          .infer_shape(infer_reshape)
          .inplace({{0, 0}})
          .backward_uses(false, false)
          .forward_cpu([](const ReshapeParam&, const ForwardCall& c) { copy_forward(c); })
          .backward_cpu([](const ReshapeParam&, const BackwardCall& c) { copy_backward(c); });

  auto transpose =
      r.add<TransposeParam>("transpose")
          .amp(AmpClass::kFloat32)
          .describe("Permutes the axes of the input (reverses them when axes is empty).")
          .inputs({"data"})
          .infer_shape(infer_transpose)
          .backward_uses(false, false)
          .forward_cpu([](const TransposeParam& p, const ForwardCall& c) {
            transpose_any(c.inputs[0], permutation(p, c.inputs[0].shape.ndim()), c.outputs[0],
                          c.req[0]);
          })
          .backward_cpu([](const TransposeParam& p, const BackwardCall& c) {
            transpose_any(c.out_grads[0],
                          inverse_permutation(permutation(p, c.in_grads[0].shape.ndim())),
                          c.in_grads[0], c.req[0]);
          });

  auto expand_dims =
      r.add<ExpandDimsParam>("expand_dims")
          .amp(AmpClass::kFloat32)
          .describe("Inserts an axis of size 1 at position axis.")
          .inputs({"data"})
          .infer_shape(infer_expand_dims)
          .inplace({{0, 0}})
          .backward_uses(false, false)
          .forward_cpu([](const ExpandDimsParam&, const ForwardCall& c) { copy_forward(c); })
          .backward_cpu([](const ExpandDimsParam&, const BackwardCall& c) { copy_backward(c); });

  auto slice_axis = r.add<SliceAxisParam>("slice_axis")
                        .amp(AmpClass::kFloat32)
                        .describe("Takes the elements [begin, end) along one axis.")
                        .inputs({"data"})
                        .infer_shape(infer_slice_axis)
                        .backward_uses(false, false)
                        .forward_cpu(slice_axis_forward)
                        .backward_cpu(slice_axis_backward);

#if MX_USE_CUDA
  flatten.forward(DeviceKind::kGPU,
                  [](const NoParams&, const ForwardCall& c) { copy_forward_gpu(c, "Flatten"); });
  flatten.backward(DeviceKind::kGPU,
                   [](const NoParams&, const BackwardCall& c) { copy_backward_gpu(c, "Flatten"); });
  reshape.forward(DeviceKind::kGPU, [](const ReshapeParam&, const ForwardCall& c) {
    copy_forward_gpu(c, "Reshape");
  });
  reshape.backward(DeviceKind::kGPU, [](const ReshapeParam&, const BackwardCall& c) {
    copy_backward_gpu(c, "Reshape");
  });
  expand_dims.forward(DeviceKind::kGPU, [](const ExpandDimsParam&, const ForwardCall& c) {
    copy_forward_gpu(c, "expand_dims");
  });
  expand_dims.backward(DeviceKind::kGPU, [](const ExpandDimsParam&, const BackwardCall& c) {
    copy_backward_gpu(c, "expand_dims");
  });
  transpose.forward(DeviceKind::kGPU, [](const TransposeParam& p, const ForwardCall& c) {
    cuda::transpose_gpu(c.rctx, "transpose", c.inputs[0], permutation(p, c.inputs[0].shape.ndim()),
                        c.outputs[0], c.req[0]);
  });
  transpose.backward(DeviceKind::kGPU, [](const TransposeParam& p, const BackwardCall& c) {
    cuda::transpose_gpu(c.rctx, "transpose", c.out_grads[0],
                        inverse_permutation(permutation(p, c.in_grads[0].shape.ndim())),
                        c.in_grads[0], c.req[0]);
  });
  slice_axis.forward(DeviceKind::kGPU, slice_axis_forward_gpu);
  slice_axis.backward(DeviceKind::kGPU, slice_axis_backward_gpu);
#else
  (void)flatten, (void)reshape, (void)transpose, (void)expand_dims, (void)slice_axis;
#endif
}

}  // namespace mx::op
