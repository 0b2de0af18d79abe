// slice (alias crop): begin/end/step per leading axis, each may be None or
// negative, with MXNet's clamping of out-of-range bounds. The forward pass
// is a strided view of the input (shape_kernels.h), the backward pass
// scatters the gradient back through the same view.
#include <algorithm>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/shape_util.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

struct SliceParam : Params<SliceParam> {
  OptionalIntTuple begin, end, step;
  static void declare(ParamDecl<SliceParam>& d) {
    d.field("begin", &SliceParam::begin)
        .describe(
            "The first index per axis (inclusive); negative counts from the end, None "
            "is the start (the end for a negative step).");
    d.field("end", &SliceParam::end)
        .describe(
            "The last index per axis (exclusive); negative counts from the end, None "
            "is the end (the start for a negative step).");
    d.field("step", &SliceParam::step)
        .set_default(OptionalIntTuple())
        .describe("The step per axis (None is 1); negative steps walk backwards.");
  }
  static SliceParam from_strings(const AttrMap& attrs, const std::string& owner) {
    SliceParam p = Params::from_strings(attrs, owner);
    if (p.begin.size() != p.end.size())
      throw InputError(str(owner, ": begin ", p.begin.to_string(), " and end ", p.end.to_string(),
                           " must have the same length"));
    if (!p.step.empty() && p.step.size() != p.begin.size())
      throw InputError(str(owner, ": step ", p.step.to_string(), " and begin ", p.begin.to_string(),
                           " must have the same length"));
    for (int i = 0; i < p.step.size(); ++i)
      if (p.step[i] == 0) throw InputError(str(owner, ": step ", p.step.to_string(), " has a 0"));
    return p;
  }
};

// One axis of the slice: elements begin, begin + step, ... (size of them).
struct AxisSlice {
  int64_t begin = 0, step = 1, size = 0;
};

// MXNet's GetIndexRange and SetSliceOpOutputDimSize for an axis of length
// len (known): bounds past either end are clamped, an empty range has size 0.
AxisSlice slice_axis_range(const SliceParam& p, int i, int64_t len) {
  AxisSlice a;
  a.step = !p.step.empty() && p.step[i] ? *p.step[i] : 1;
  if (len == 0) return a;
  const int64_t s = a.step;
  int64_t b = p.begin[i] ? *p.begin[i] : (s < 0 ? len - 1 : 0);
  int64_t e = p.end[i] ? *p.end[i] : (s < 0 ? -1 : len);
  if (b < 0) b += len;
  if (e < 0 && p.end[i]) e += len;
  if (b < 0 && s > 0) b = 0;
  if (b > len - 1 && s < 0) b = len - 1;
  if (b < 0 || b > len - 1) b = -1;  // the range is empty
  e = std::min(std::max<int64_t>(e, -1), len);
  a.begin = b;
  if (e != b && b >= 0) {
    if (s > 0)
      a.size = e > b ? (e - b - 1) / s + 1 : 0;
    else
      a.size = e < b ? (b - e - 1) / (-s) + 1 : 0;
  }
  return a;
}

void check_rank(const SliceParam& p, const Shape& data) {
  if (data.ndim() == 0) throw ShapeError("the input must have at least 1 dimension");
  if (p.begin.size() > data.ndim())
    throw ShapeError(str("begin ", p.begin.to_string(), " slices ", p.begin.size(),
                         " axes but the input has shape ", data.to_string()));
}

void infer_slice(const SliceParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  check_rank(p, data);
  // Axes past begin's length pass through, in both directions.
  if (out[0].rank_known() && out[0].ndim() == data.ndim())
    for (int i = p.begin.size(); i < data.ndim(); ++i)
      if (data[i] < 0) data[i] = out[0][i];
  Shape o = data;
  for (int i = 0; i < p.begin.size(); ++i)
    o[i] = data[i] < 0 ? -1 : slice_axis_range(p, i, data[i]).size;
  assign_shape(out[0], o, "output");
}

// The view of the input that the output is, and where it starts.
struct SliceView {
  kernels::StridedIndex index;
  int64_t offset = 0;  // of the view's element 0 in the input
  int64_t size = 0;    // elements of the output
};

SliceView slice_view(const SliceParam& p, const Shape& data) {
  const std::vector<int64_t> strides = kernels::contiguous_strides(data);
  std::vector<int64_t> dims(static_cast<size_t>(data.ndim())), view(dims.size());
  SliceView v;
  v.size = 1;
  for (int i = 0; i < data.ndim(); ++i) {
    const auto u = static_cast<size_t>(i);
    AxisSlice a = i < p.begin.size() ? slice_axis_range(p, i, data[i]) : AxisSlice{0, 1, data[i]};
    dims[u] = a.size;
    view[u] = strides[u] * a.step;
    v.offset += a.begin * strides[u];
    v.size *= a.size;
  }
  if (v.size == 0) v.offset = 0;
  v.index = kernels::strided_index(dims, view);
  return v;
}

void slice_forward_cpu(const SliceParam& p, const ForwardCall& c) {
  const SliceView v = slice_view(p, c.inputs[0].shape);
  dispatch_dtype(c.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    strided_gather(c.outputs[0].ptr<T>(), c.inputs[0].ptr<T>() + v.offset, v.index, v.size,
                   c.req[0]);
  });
}

void slice_backward_cpu(const SliceParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const SliceView v = slice_view(p, grad.shape);
  dispatch_dtype(grad.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* g = grad.ptr<T>();
    // Outside the slice the gradient is zero (kept as is when adding).
    if (req != OpReq::kAdd) std::fill(g, g + grad.size(), T(0.0f));
    strided_scatter(g + v.offset, c.out_grads[0].ptr<T>(), v.index, v.size,
                    req == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite);
  });
}

#if MX_USE_CUDA
// The address of element `offset` of t.
const void* element_at(const TensorRef& t, int64_t offset) {
  return static_cast<const char*>(t.data) + offset * static_cast<int64_t>(dtype_size(t.dtype));
}

void slice_forward_gpu(const SliceParam& p, const ForwardCall& c) {
  const SliceView v = slice_view(p, c.inputs[0].shape);
  cuda::strided_gather_gpu(c.rctx, "slice", c.inputs[0].dtype, c.outputs[0].data,
                           element_at(c.inputs[0], v.offset), v.index, v.size, c.req[0]);
}

void slice_backward_gpu(const SliceParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const SliceView v = slice_view(p, grad.shape);
  if (req != OpReq::kAdd) cuda::zero_gpu(c.rctx, "slice", grad);
  cuda::strided_scatter_gpu(c.rctx, "slice", grad.dtype,
                            const_cast<void*>(element_at(grad, v.offset)), c.out_grads[0].data,
                            v.index, v.size, req == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite);
}
#endif

}  // namespace

void register_slice_ops(OpRegistry& r) {
  auto slice = r.add<SliceParam>("slice")
                   .amp(AmpClass::kFloat32)
                   .alias("crop")
                   .describe(
                       "Takes begin:end:step of each of the leading len(begin) axes (NumPy's "
                       "basic slicing, with MXNet's clamping of out-of-range bounds). Where "
                       "MXNet 1.9.1's oneDNN path fails (a begin clamped to 0, a negative step "
                       "past the end) mx gives the values its other kernels give.")
                   .inputs({"data"})
                   .infer_shape(infer_slice)
                   .backward_uses(false, false)
                   .forward_cpu(slice_forward_cpu)
                   .backward_cpu(slice_backward_cpu);
#if MX_USE_CUDA
  slice.forward(DeviceKind::kGPU, slice_forward_gpu);
  slice.backward(DeviceKind::kGPU, slice_backward_gpu);
#else
  (void)slice;
#endif
}

}  // namespace mx::op
