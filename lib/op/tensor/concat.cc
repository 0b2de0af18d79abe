// Joining and splitting along one axis: Concat (inputs side by side) and
// SliceChannel (equal parts, each a separate output). Each is the other's
// gradient. Both work for every element type.
#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/tensor_util.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

// (outer, axis size, inner) of `shape` around `axis`.
struct AxisSplit {
  int64_t outer, size, inner;
};
AxisSplit split_at(const Shape& shape, int axis) {
  return {shape.prod(0, axis), shape[axis], shape.prod(axis + 1, shape.ndim())};
}

// ---- Concat ----------------------------------------------------------------

struct ConcatParam : Params<ConcatParam> {
  int num_args = 1;
  int dim = 1;
  static void declare(ParamDecl<ConcatParam>& d) {
    d.field("num_args", &ConcatParam::num_args)
        .set_lower_bound(1)
        .describe("Number of inputs to concatenate.");
    d.field("dim", &ConcatParam::dim)
        .set_default(1)
        .describe("The axis to concatenate along; may be negative.");
  }
};

std::vector<std::string> arg_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

void infer_concat(const ConcatParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  // Every input and the output agree outside the axis; the output's axis is
  // the sum of the inputs'.
  Shape common;
  int axis = -1;
  auto merge = [&](const Shape& s, const std::string& what) {
    if (!s.rank_known()) return;
    if (s.ndim() == 0) throw ShapeError(what + ": zero-dimensional arrays cannot be concatenated");
    axis = normalize_axis(p.dim, s);
    Shape rest = s;
    rest[axis] = -1;
    try {
      assign_shape(common, rest, what);
    } catch (const ShapeError&) {
      throw ShapeError(str(what, " has shape ", s.to_string(), " but the arrays must match ",
                           common.to_string(), " outside axis ", axis));
    }
  };
  const auto names = arg_names(p.num_args);
  for (size_t i = 0; i < in.size(); ++i) merge(in[i], "input '" + names[i] + "'");
  merge(out[0], "output");
  if (!common.rank_known()) return;
  int64_t total = 0;
  int unknown = -1, unknowns = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    Shape s = common;
    if (in[i].rank_known()) s[axis] = in[i][axis];
    assign_shape(in[i], s, "input '" + names[i] + "'");
    if (in[i][axis] < 0) {
      unknown = static_cast<int>(i);
      ++unknowns;
    } else {
      total += in[i][axis];
    }
  }
  Shape o = common;
  o[axis] = unknowns == 0 ? total : -1;
  assign_shape(out[0], o, "output");
  // One input's size on the axis follows from the output's.
  if (unknowns == 1 && out[0][axis] >= 0) {
    if (out[0][axis] < total)
      throw ShapeError(str("output ", out[0].to_string(), " is smaller on axis ", axis,
                           " than the inputs together"));
    in[static_cast<size_t>(unknown)][axis] = out[0][axis] - total;
  }
}

// ---- SliceChannel ----------------------------------------------------------------

struct SliceChannelParam : Params<SliceChannelParam> {
  int num_outputs = 1;
  int axis = 1;
  bool squeeze_axis = false;
  static void declare(ParamDecl<SliceChannelParam>& d) {
    d.field("num_outputs", &SliceChannelParam::num_outputs)
        .set_lower_bound(1)
        .describe("Number of equal parts (outputs).");
    d.field("axis", &SliceChannelParam::axis)
        .set_default(1)
        .describe("The axis to split; may be negative.");
    d.field("squeeze_axis", &SliceChannelParam::squeeze_axis)
        .set_default(false)
        .describe("Remove the split axis from the outputs (its size must equal num_outputs).");
  }
};

void infer_slice_channel(const SliceChannelParam& p, ShapeVector& in, ShapeVector&,
                         ShapeVector& out) {
  Shape& data = in[0];
  const int n = p.num_outputs;
  // The input from any known output, when the input is not known.
  if (!data.is_known()) {
    for (const Shape& o : out) {
      if (!o.rank_known()) continue;
      const int ndim = o.ndim() + (p.squeeze_axis ? 1 : 0);
      const int axis = normalize_axis(p.axis, ndim);
      std::vector<int64_t> dims = o.to_vector();
      if (p.squeeze_axis) {
        dims.insert(dims.begin() + axis, n);
      } else {
        int64_t& d = dims[static_cast<size_t>(axis)];
        d = d < 0 ? -1 : d * n;
      }
      assign_shape(data, Shape(dims), "input 'data'");
    }
  }
  if (!data.rank_known()) return;
  const int axis = normalize_axis(p.axis, data);
  const int64_t size = data[axis];
  if (size >= 0) {
    if (p.squeeze_axis && size != n)
      throw ShapeError(str("squeeze_axis needs axis ", axis, " of input ", data.to_string(),
                           " to have num_outputs=", n, " elements, but it has ", size));
    if (size % n != 0)
      throw ShapeError(str("cannot split axis ", axis, " of input ", data.to_string(),
                           " into num_outputs=", n, " equal parts"));
  }
  std::vector<int64_t> dims = data.to_vector();
  if (p.squeeze_axis)
    dims.erase(dims.begin() + axis);
  else
    dims[static_cast<size_t>(axis)] = size < 0 ? -1 : size / n;
  for (size_t i = 0; i < out.size(); ++i)
    assign_shape(out[i], Shape(dims), "output " + std::to_string(i));
}

}  // namespace

namespace {

void register_concat(OpRegistry& r) {
  // _rnn_param_concat is Gluon's name for the concat of an RNN's weights
  // into its flat parameter vector: MXNet lets its one input of unknown size
  // follow from the output, which Concat here always does.
  auto concat = r.add<ConcatParam>("Concat")
                    .amp(AmpClass::kFollow)
                    .alias("concat")
                    .alias("_rnn_param_concat")
                    .describe(
                        "Joins the inputs along axis dim; all other axes must match (one "
                        "input's size on the axis may follow from the output's).")
                    .inputs([](const ConcatParam& p) { return arg_names(p.num_args); })
                    .infer_shape(infer_concat)
                    .backward_uses(false, false)
                    .forward_cpu([](const ConcatParam& p, const ForwardCall& c) {
                      const TensorRef& out = c.outputs[0];
                      const int axis = normalize_axis(p.dim, out.shape);
                      const AxisSplit o = split_at(out.shape, axis);
                      dispatch_dtype(out.dtype, [&](auto tag) {
                        using T = typename decltype(tag)::type;
                        int64_t offset = 0;
                        for (const TensorRef& in : c.inputs) {
                          const int64_t len = in.shape[axis] * o.inner;
                          copy_blocks(out.ptr<T>() + offset, o.size * o.inner, in.ptr<T>(), len,
                                      o.outer, len, c.req[0]);
                          offset += len;
                        }
                      });
                    })
                    .backward_cpu([](const ConcatParam& p, const BackwardCall& c) {
                      const TensorRef& g = c.out_grads[0];
                      const int axis = normalize_axis(p.dim, g.shape);
                      const AxisSplit o = split_at(g.shape, axis);
                      dispatch_dtype(g.dtype, [&](auto tag) {
                        using T = typename decltype(tag)::type;
                        int64_t offset = 0;
                        for (size_t k = 0; k < c.in_grads.size(); ++k) {
                          const TensorRef& gi = c.in_grads[k];
                          const int64_t len = gi.shape[axis] * o.inner;
                          copy_blocks(gi.ptr<T>(), len, g.ptr<T>() + offset, o.size * o.inner,
                                      o.outer, len, c.req[k]);
                          offset += len;
                        }
                      });
                    });
#if MX_USE_CUDA
  concat.forward(DeviceKind::kGPU, [](const ConcatParam& p, const ForwardCall& c) {
    const TensorRef& out = c.outputs[0];
    const int axis = normalize_axis(p.dim, out.shape);
    const AxisSplit o = split_at(out.shape, axis);
    int64_t offset = 0;
    for (const TensorRef& in : c.inputs) {
      const int64_t len = in.shape[axis] * o.inner;
      cuda::copy_row_blocks_gpu(c.rctx, "Concat", out.dtype, out.data, in.data,
                                kernels::dense_to_part(o.outer, o.size * o.inner, offset, len),
                                c.req[0]);
      offset += len;
    }
  });
  concat.backward(DeviceKind::kGPU, [](const ConcatParam& p, const BackwardCall& c) {
    const TensorRef& g = c.out_grads[0];
    const int axis = normalize_axis(p.dim, g.shape);
    const AxisSplit o = split_at(g.shape, axis);
    int64_t offset = 0;
    for (size_t k = 0; k < c.in_grads.size(); ++k) {
      const int64_t len = c.in_grads[k].shape[axis] * o.inner;
      cuda::copy_row_blocks_gpu(c.rctx, "Concat", g.dtype, c.in_grads[k].data, g.data,
                                kernels::part_to_dense(o.outer, o.size * o.inner, offset, len),
                                c.req[k]);
      offset += len;
    }
  });
#else
  (void)concat;
#endif
}

void register_slice_channel(OpRegistry& r) {
  auto slice_channel =
      r.add<SliceChannelParam>("SliceChannel")
          .amp(AmpClass::kFloat32)
          .alias("split")
          .describe("Splits the input along an axis into num_outputs equal parts.")
          .inputs({"data"})
          .outputs([](const SliceChannelParam& p) {
            std::vector<std::string> names;
            for (int i = 0; i < p.num_outputs; ++i) names.push_back("output" + std::to_string(i));
            return names;
          })
          .infer_shape(infer_slice_channel)
          .backward_uses(false, false)
          .forward_cpu([](const SliceChannelParam& p, const ForwardCall& c) {
            const TensorRef& in = c.inputs[0];
            const AxisSplit s = split_at(in.shape, normalize_axis(p.axis, in.shape));
            const int64_t len = s.size / p.num_outputs * s.inner;
            dispatch_dtype(in.dtype, [&](auto tag) {
              using T = typename decltype(tag)::type;
              for (size_t k = 0; k < c.outputs.size(); ++k)
                copy_blocks(c.outputs[k].ptr<T>(), len, in.ptr<T>() + static_cast<int64_t>(k) * len,
                            s.size * s.inner, s.outer, len, c.req[k]);
            });
          })
          .backward_cpu([](const SliceChannelParam& p, const BackwardCall& c) {
            const TensorRef& gi = c.in_grads[0];
            const AxisSplit s = split_at(gi.shape, normalize_axis(p.axis, gi.shape));
            const int64_t len = s.size / p.num_outputs * s.inner;
            dispatch_dtype(gi.dtype, [&](auto tag) {
              using T = typename decltype(tag)::type;
              for (size_t k = 0; k < c.out_grads.size(); ++k)
                copy_blocks(gi.ptr<T>() + static_cast<int64_t>(k) * len, s.size * s.inner,
                            c.out_grads[k].ptr<T>(), len, s.outer, len, c.req[0]);
            });
          });
#if MX_USE_CUDA
  slice_channel.forward(DeviceKind::kGPU, [](const SliceChannelParam& p, const ForwardCall& c) {
    const TensorRef& in = c.inputs[0];
    const AxisSplit s = split_at(in.shape, normalize_axis(p.axis, in.shape));
    const int64_t len = s.size / p.num_outputs * s.inner;
    for (size_t k = 0; k < c.outputs.size(); ++k)
      cuda::copy_row_blocks_gpu(
          c.rctx, "SliceChannel", in.dtype, c.outputs[k].data, in.data,
          kernels::part_to_dense(s.outer, s.size * s.inner, static_cast<int64_t>(k) * len, len),
          c.req[k]);
  });
  slice_channel.backward(DeviceKind::kGPU, [](const SliceChannelParam& p, const BackwardCall& c) {
    const TensorRef& gi = c.in_grads[0];
    const AxisSplit s = split_at(gi.shape, normalize_axis(p.axis, gi.shape));
    const int64_t len = s.size / p.num_outputs * s.inner;
    for (size_t k = 0; k < c.out_grads.size(); ++k)
      cuda::copy_row_blocks_gpu(
          c.rctx, "SliceChannel", gi.dtype, gi.data, c.out_grads[k].data,
          kernels::dense_to_part(s.outer, s.size * s.inner, static_cast<int64_t>(k) * len, len),
          c.req[0]);
  });
#else
  (void)slice_channel;
#endif
}

}  // namespace

void register_concat_ops(OpRegistry& r) {
  register_concat(r);
  register_slice_channel(r);
}

}  // namespace mx::op
