// Axis operators of the sequence models: SwapAxis (the TNC <-> NTC switch
// Gluon's RNN layers insert), squeeze (drops size-1 axes) and stack (joins
// arrays along a new axis). They work for every element type; the gradient
// moves back the same way.
#include <algorithm>
#include <numeric>

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

void copy_data(const TensorRef& dst, const TensorRef& src, OpReq req) {
  dispatch_dtype(src.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    copy_all(dst.ptr<T>(), src.ptr<T>(), src.size(), req);
  });
}

// ---- SwapAxis ----------------------------------------------------------------

struct SwapAxisParam : Params<SwapAxisParam> {
  int dim1 = 0;
  int dim2 = 0;
  static void declare(ParamDecl<SwapAxisParam>& d) {
    d.field("dim1", &SwapAxisParam::dim1)
        .set_default(0)
        .describe("The first axis to swap; may be negative.");
    d.field("dim2", &SwapAxisParam::dim2)
        .set_default(0)
        .describe("The second axis to swap; may be negative.");
  }
};

// The permutation that swaps the two axes of an ndim-dimensional array.
std::vector<int> swap_permutation(const SwapAxisParam& p, int ndim) {
  std::vector<int> perm(static_cast<size_t>(ndim));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(normalize_axis(p.dim1, ndim))],
            perm[static_cast<size_t>(normalize_axis(p.dim2, ndim))]);
  return perm;
}

void infer_swap_axis(const SwapAxisParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  // The swap is its own inverse: each side is the other swapped.
  for (auto [from, to, what] :
       {std::tuple{&data, &out[0], "output"}, std::tuple{&out[0], &data, "input 'data'"}}) {
    if (!from->rank_known()) continue;
    const int a = normalize_axis(p.dim1, *from), b = normalize_axis(p.dim2, *from);
    Shape swapped = *from;
    std::swap(swapped[a], swapped[b]);
    assign_shape(*to, swapped, what);
  }
}

// ---- squeeze ----------------------------------------------------------------

struct SqueezeParam : Params<SqueezeParam> {
  std::optional<IntTuple> axis;
  static void declare(ParamDecl<SqueezeParam>& d) {
    d.field("axis", &SqueezeParam::axis)
        .set_default(std::nullopt)
        .describe("The size-1 axes to remove (may be negative); None removes every size-1 axis.");
  }
};

// Which axes of `data` squeeze removes (unknown sizes on listed axes are 1).
std::vector<bool> squeezed_axes(const SqueezeParam& p, Shape& data) {
  std::vector<bool> drop(static_cast<size_t>(data.ndim()), false);
  if (!p.axis) {
    for (int i = 0; i < data.ndim(); ++i) drop[static_cast<size_t>(i)] = data[i] == 1;
    return drop;
  }
  for (int64_t a : p.axis->values) {
    const int axis = normalize_axis(a, data);
    if (drop[static_cast<size_t>(axis)])
      throw ShapeError(str("axis ", p.axis->to_string(), " names axis ", axis, " twice"));
    if (data[axis] < 0) data[axis] = 1;
    if (data[axis] != 1)
      throw ShapeError(
          str("cannot squeeze axis ", axis, " of input ", data.to_string(), ": its size is not 1"));
    drop[static_cast<size_t>(axis)] = true;
  }
  return drop;
}

void infer_squeeze(const SqueezeParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  if (!p.axis)
    for (int i = 0; i < data.ndim(); ++i)
      if (data[i] < 0) return;  // whether it is 1 decides the output's rank
  const std::vector<bool> drop = squeezed_axes(p, data);
  std::vector<int64_t> dims;
  std::vector<int> from;  // the input axis of each output axis
  for (int i = 0; i < data.ndim(); ++i) {
    if (drop[static_cast<size_t>(i)]) continue;
    dims.push_back(data[i]);
    from.push_back(i);
  }
  if (dims.empty()) dims.push_back(1);  // MXNet keeps one axis
  assign_shape(out[0], Shape(dims), "output");
  for (size_t j = 0; j < from.size(); ++j)
    if (data[from[j]] < 0) data[from[j]] = out[0][static_cast<int>(j)];
}

// ---- stack ----------------------------------------------------------------

struct StackParam : Params<StackParam> {
  int axis = 0;
  int num_args = 1;
  static void declare(ParamDecl<StackParam>& d) {
    d.field("axis", &StackParam::axis)
        .set_default(0)
        .describe("Where the new axis goes in the output, in [-ndim - 1, ndim].");
    d.field("num_args", &StackParam::num_args)
        .set_lower_bound(1)
        .describe("Number of inputs to stack.");
  }
};

std::vector<std::string> arg_names(int n) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.push_back("arg" + std::to_string(i));
  return names;
}

// The axis of the output where the inputs are stacked (ndim: the inputs').
int stack_axis(const StackParam& p, int ndim) {
  if (p.axis < -ndim - 1 || p.axis > ndim)
    throw ShapeError(str("axis ", p.axis, " is out of range [", -ndim - 1, ", ", ndim,
                         "] for inputs of ", ndim, " dimensions"));
  return p.axis < 0 ? p.axis + ndim + 1 : p.axis;
}

void infer_stack(const StackParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const auto names = arg_names(p.num_args);
  Shape common;
  if (out[0].rank_known()) {
    if (out[0].ndim() == 0) throw ShapeError("the output must have at least 1 dimension");
    std::vector<int64_t> dims = out[0].to_vector();
    const int axis = stack_axis(p, out[0].ndim() - 1);
    if (dims[static_cast<size_t>(axis)] >= 0 && dims[static_cast<size_t>(axis)] != p.num_args)
      throw ShapeError(str("output ", out[0].to_string(), " must have num_args=", p.num_args,
                           " elements on axis ", axis));
    dims.erase(dims.begin() + axis);
    common = Shape(dims);
  }
  for (size_t i = 0; i < in.size(); ++i) {
    try {
      assign_shape(common, in[i], "input '" + names[i] + "'");
    } catch (const ShapeError&) {
      throw ShapeError(str("input '", names[i], "' has shape ", in[i].to_string(),
                           " but the arrays to stack must all have shape ", common.to_string()));
    }
  }
  if (!common.rank_known()) return;
  for (size_t i = 0; i < in.size(); ++i) assign_shape(in[i], common, "input '" + names[i] + "'");
  std::vector<int64_t> dims = common.to_vector();
  dims.insert(dims.begin() + stack_axis(p, common.ndim()), p.num_args);
  assign_shape(out[0], Shape(dims), "output");
}

// Input k of stack is the block of `inner` elements at k * inner in each of
// the `outer` rows (of num_args * inner elements) of the output.
struct StackLayout {
  int64_t outer, inner;
};
StackLayout stack_layout(const StackParam& p, const Shape& input) {
  const int axis = stack_axis(p, input.ndim());
  return {input.prod(0, axis), input.prod(axis, input.ndim())};
}

void stack_forward_cpu(const StackParam& p, const ForwardCall& c) {
  const StackLayout l = stack_layout(p, c.inputs[0].shape);
  const int64_t row = p.num_args * l.inner;
  dispatch_dtype(c.outputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int k = 0; k < p.num_args; ++k)
      copy_blocks(c.outputs[0].ptr<T>() + k * l.inner, row,
                  c.inputs[static_cast<size_t>(k)].ptr<T>(), l.inner, l.outer, l.inner, c.req[0]);
  });
}

void stack_backward_cpu(const StackParam& p, const BackwardCall& c) {
  const StackLayout l = stack_layout(p, c.in_grads[0].shape);
  const int64_t row = p.num_args * l.inner;
  dispatch_dtype(c.out_grads[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int k = 0; k < p.num_args; ++k)
      copy_blocks(c.in_grads[static_cast<size_t>(k)].ptr<T>(), l.inner,
                  c.out_grads[0].ptr<T>() + k * l.inner, row, l.outer, l.inner,
                  c.req[static_cast<size_t>(k)]);
  });
}

#if MX_USE_CUDA
void stack_forward_gpu(const StackParam& p, const ForwardCall& c) {
  const StackLayout l = stack_layout(p, c.inputs[0].shape);
  for (int k = 0; k < p.num_args; ++k)
    cuda::copy_row_blocks_gpu(
        c.rctx, "stack", c.outputs[0].dtype, c.outputs[0].data,
        c.inputs[static_cast<size_t>(k)].data,
        kernels::dense_to_part(l.outer, p.num_args * l.inner, k * l.inner, l.inner), c.req[0]);
}

void stack_backward_gpu(const StackParam& p, const BackwardCall& c) {
  const StackLayout l = stack_layout(p, c.in_grads[0].shape);
  for (int k = 0; k < p.num_args; ++k)
    cuda::copy_row_blocks_gpu(
        c.rctx, "stack", c.out_grads[0].dtype, c.in_grads[static_cast<size_t>(k)].data,
        c.out_grads[0].data,
        kernels::part_to_dense(l.outer, p.num_args * l.inner, k * l.inner, l.inner),
        c.req[static_cast<size_t>(k)]);
}
#endif

}  // namespace

void register_shape_ops(OpRegistry& r) {
  auto swap_axis =
      r.add<SwapAxisParam>("SwapAxis")
          .amp(AmpClass::kFloat32)
          .alias("swapaxes")
          .describe("Interchanges two axes of the input.")
          .inputs({"data"})
          .infer_shape(infer_swap_axis)
          .backward_uses(false, false)
          .forward_cpu([](const SwapAxisParam& p, const ForwardCall& c) {
            transpose_any(c.inputs[0], swap_permutation(p, c.inputs[0].shape.ndim()), c.outputs[0],
                          c.req[0]);
          })
          .backward_cpu([](const SwapAxisParam& p, const BackwardCall& c) {
            transpose_any(c.out_grads[0], swap_permutation(p, c.in_grads[0].shape.ndim()),
                          c.in_grads[0], c.req[0]);
          });

  auto squeeze =
      r.add<SqueezeParam>("squeeze")
          .amp(AmpClass::kFloat32)
          .describe(
              "Removes axes of size 1 (the listed ones, or all); at least one axis remains, "
              "as in MXNet.")
          .inputs({"data"})
          .infer_shape(infer_squeeze)
          .inplace({{0, 0}})
          .backward_uses(false, false)
          .forward_cpu([](const SqueezeParam&, const ForwardCall& c) {
            copy_data(c.outputs[0], c.inputs[0], c.req[0]);
          })
          .backward_cpu([](const SqueezeParam&, const BackwardCall& c) {
            copy_data(c.in_grads[0], c.out_grads[0], c.req[0]);
          });

  auto stack = r.add<StackParam>("stack")
                   .amp(AmpClass::kFloat32)
                   .describe("Joins arrays of one shape along a new axis.")
                   .inputs([](const StackParam& p) { return arg_names(p.num_args); })
                   .infer_shape(infer_stack)
                   .backward_uses(false, false)
                   .forward_cpu(stack_forward_cpu)
                   .backward_cpu(stack_backward_cpu);

#if MX_USE_CUDA
  swap_axis.forward(DeviceKind::kGPU, [](const SwapAxisParam& p, const ForwardCall& c) {
    cuda::transpose_gpu(c.rctx, "SwapAxis", c.inputs[0],
                        swap_permutation(p, c.inputs[0].shape.ndim()), c.outputs[0], c.req[0]);
  });
  swap_axis.backward(DeviceKind::kGPU, [](const SwapAxisParam& p, const BackwardCall& c) {
    cuda::transpose_gpu(c.rctx, "SwapAxis", c.out_grads[0],
                        swap_permutation(p, c.in_grads[0].shape.ndim()), c.in_grads[0], c.req[0]);
  });
  squeeze.forward(DeviceKind::kGPU, [](const SqueezeParam&, const ForwardCall& c) {
    cuda::copy_gpu(c.rctx, "squeeze", c.outputs[0], c.inputs[0], c.req[0]);
  });
  squeeze.backward(DeviceKind::kGPU, [](const SqueezeParam&, const BackwardCall& c) {
    cuda::copy_gpu(c.rctx, "squeeze", c.in_grads[0], c.out_grads[0], c.req[0]);
  });
  stack.forward(DeviceKind::kGPU, stack_forward_gpu);
  stack.backward(DeviceKind::kGPU, stack_backward_gpu);
#else
  (void)swap_axis, (void)squeeze, (void)stack;
#endif
}

}  // namespace mx::op
