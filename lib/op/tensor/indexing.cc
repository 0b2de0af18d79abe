// Indexing operators. Indices may be of any type (floating ones are
// truncated, as in MXNet) and get a zero gradient.
//   one_hot    indices to one-hot vectors along a new last axis; indices
//              outside [0, depth) give a row of off_value; no gradient.
//   take       elements along one axis at the given indices (clip, wrap or
//              raise for those out of range).
//   gather_nd  elements (or blocks) at the coordinates given by the first
//              axis of the indices.
//   where      elements of x where the condition is nonzero, of y elsewhere.
// The element logic of the last three is in indexing_kernels.h, shared with
// the GPU kernels.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/indexing_kernels.h"
#include "op/tensor/tensor_util.h"
#if MX_USE_CUDA
#include "op/cuda/indexing_gpu.h"
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

struct OneHotParam : Params<OneHotParam> {
  int depth = 0;
  double on_value = 1.0;
  double off_value = 0.0;
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<OneHotParam>& d) {
    d.field("depth", &OneHotParam::depth)
        .set_lower_bound(0)
        .describe("Length of the one-hot vectors (the new last axis).");
    d.field("on_value", &OneHotParam::on_value)
        .set_default(1.0)
        .describe("The value at the index.");
    d.field("off_value", &OneHotParam::off_value)
        .set_default(0.0)
        .describe("The value everywhere else.");
    d.field("dtype", &OneHotParam::dtype)
        .set_default(DType::kFloat32)
        .describe("The element type of the output.");
  }
};

void infer_one_hot(const OneHotParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& indices = in[0];
  if (out[0].rank_known()) {
    if (out[0].ndim() == 0) throw ShapeError("the output must have at least 1 dimension");
    std::vector<int64_t> dims = out[0].to_vector();
    dims.pop_back();
    assign_shape(indices, Shape(dims), "input 'indices'");
  }
  if (!indices.rank_known()) return;
  std::vector<int64_t> dims = indices.to_vector();
  dims.push_back(p.depth);
  assign_shape(out[0], Shape(dims), "output");
}

template <typename T>
T value_as(double v) {
  if constexpr (is_half_like_v<T>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <typename I>
double as_double(I v) {
  if constexpr (is_half_like_v<I>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

// Indices of unknown dtype are taken to be the data's, as data loaders
// produce them; the output has the data's dtype.
void infer_indexing_type(DTypeVector& in, DTypeVector& out) {
  assign_type(out[0], in[0], "output");
  assign_type(in[0], out[0], "input 0");
  if (!in[1]) in[1] = in[0];
}

// dst[0, n) (req) src[0, n), within one thread.
template <typename T>
void copy_row(T* dst, const T* src, int64_t n, OpReq req) {
  if (req == OpReq::kAdd) {
    for (int64_t j = 0; j < n; ++j) store(dst + j, req, src[j]);
  } else if (req != OpReq::kNull) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  }
}

// Writes the zero gradient of an index input (nothing to add for kAdd).
void zero_index_grad(const TensorRef& grad, OpReq req) {
  if (req == OpReq::kWrite || req == OpReq::kInplace)
    std::memset(grad.data, 0, static_cast<size_t>(grad.size()) * dtype_size(grad.dtype));
}

// ---- take ----------------------------------------------------------------

struct TakeParam : Params<TakeParam> {
  int axis = 0;
  kernels::TakeMode mode = kernels::TakeMode::kClip;
  static void declare(ParamDecl<TakeParam>& d) {
    d.field("axis", &TakeParam::axis)
        .set_default(0)
        .describe("The axis to take from, in [-ndim, ndim).");
    d.field("mode", &TakeParam::mode)
        .set_default(kernels::TakeMode::kClip)
        .add_enum("clip", kernels::TakeMode::kClip)
        .add_enum("raise", kernels::TakeMode::kRaise)
        .add_enum("wrap", kernels::TakeMode::kWrap)
        .describe(
            "Indices outside [0, size): clip to the nearest end, wrap around (negative ones "
            "count from the end), or raise an error.");
  }
};

void infer_take(const TakeParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape &data = in[0], &indices = in[1];
  if (data.rank_known() && data.ndim() == 0)
    throw ShapeError("input 'a' must have at least 1 dimension");
  if (indices.rank_known() && indices.ndim() == 0)
    throw ShapeError("input 'indices' must have at least 1 dimension");
  if (!data.rank_known() || !indices.rank_known()) return;
  const int axis = normalize_axis(p.axis, data);
  std::vector<int64_t> dims(data.begin(), data.begin() + axis);
  for (int64_t d : indices) dims.push_back(d);
  for (int i = axis + 1; i < data.ndim(); ++i) dims.push_back(data[i]);
  assign_shape(out[0], Shape(dims), "output");
}

kernels::TakeLayout take_layout(const TakeParam& p, const Shape& data, const Shape& indices) {
  const int axis = normalize_axis(p.axis, data);
  return {data.prod(0, axis), data[axis], data.prod(axis + 1, data.ndim()), indices.size()};
}

template <typename I>
void check_take_indices(const I* idx, int64_t count, int64_t size) {
  for (int64_t k = 0; k < count; ++k)
    if (!kernels::take_in_range(idx[k], size))
      throw Error(str("take: index ", kernels::convert_value<double>(idx[k]),
                      " is out of range [0, ", size - 1, "] (mode 'raise')"));
}

void take_forward_cpu(const TakeParam& p, const ForwardCall& c) {
  const TensorRef &data = c.inputs[0], &indices = c.inputs[1], &out = c.outputs[0];
  const kernels::TakeLayout l = take_layout(p, data.shape, indices.shape);
  if (c.req[0] == OpReq::kNull || out.size() == 0) return;
  if (l.size == 0) throw Error("take: cannot take from an axis of size 0");
  dispatch_dtype(indices.dtype, [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.ptr<I>();
    if (p.mode == kernels::TakeMode::kRaise) check_take_indices(idx, l.count, l.size);
    dispatch_dtype(data.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = data.ptr<T>();
      T* y = out.ptr<T>();
      // One row of `inner` elements per (outer, index) pair.
      parallel_for(l.outer * l.count, std::max<int64_t>(1, kParallelGrain / l.inner),
                   [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                       const int64_t o = r / l.count, k = r % l.count;
                       const int64_t row = kernels::take_position(idx[k], l.size, p.mode);
                       copy_row(y + r * l.inner, x + (o * l.size + row) * l.inner, l.inner,
                                c.req[0]);
                     }
                   });
    });
  });
}

void take_backward_cpu(const TakeParam& p, const BackwardCall& c) {
  zero_index_grad(c.in_grads[1], c.req[1]);
  if (c.req[0] == OpReq::kNull) return;
  const TensorRef &indices = c.inputs[1], &grad = c.in_grads[0];
  const kernels::TakeLayout l = take_layout(p, grad.shape, indices.shape);
  dispatch_dtype(indices.dtype, [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.ptr<I>();
    dispatch_real(grad.dtype, "take", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dx = grad.ptr<T>();
      const T* g = c.out_grads[0].ptr<T>();
      if (c.req[0] != OpReq::kAdd) std::fill(dx, dx + grad.size(), T(0));
      // Blocks of columns of each outer row: every thread visits the indices
      // in order, so the sums do not depend on the thread count.
      const int64_t width = std::min<int64_t>(l.inner, 256);
      const int64_t blocks = (l.inner + width - 1) / width;
      parallel_for(l.outer * blocks,
                   std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, l.count * width)),
                   [&](int64_t w0, int64_t w1) {
                     for (int64_t w = w0; w < w1; ++w) {
                       const int64_t o = w / blocks, j0 = (w % blocks) * width;
                       const int64_t j1 = std::min(l.inner, j0 + width);
                       for (int64_t k = 0; k < l.count; ++k) {
                         const int64_t row = kernels::take_position(idx[k], l.size, p.mode);
                         T* dst = dx + (o * l.size + row) * l.inner;
                         const T* src = g + (o * l.count + k) * l.inner;
                         for (int64_t j = j0; j < j1; ++j) dst[j] += src[j];
                       }
                     }
                   });
    });
  });
}

// ---- gather_nd ----------------------------------------------------------------

void infer_gather_nd(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape &data = in[0], &indices = in[1];
  if (indices.rank_known() && indices.ndim() < 2)
    throw ShapeError(str("input 'indices' of shape ", indices.to_string(),
                         " must have at least 2 dimensions (coordinates, positions...)"));
  if (!data.rank_known() || !indices.rank_known() || indices[0] < 0) return;
  const int64_t m = indices[0];
  if (m > data.ndim())
    throw ShapeError(str("input 'indices' of shape ", indices.to_string(), " gives ", m,
                         " coordinates but the data has ", data.ndim(), " dimensions (shape ",
                         data.to_string(), ")"));
  std::vector<int64_t> dims(indices.begin() + 1, indices.end());
  for (int i = static_cast<int>(m); i < data.ndim(); ++i) dims.push_back(data[i]);
  assign_shape(out[0], Shape(dims), "output");
}

kernels::GatherNdLayout gather_nd_layout(const Shape& data, const Shape& indices) {
  kernels::GatherNdLayout l;
  l.m = static_cast<int>(indices[0]);
  l.count = indices.prod(1, indices.ndim());
  l.inner = data.prod(l.m, data.ndim());
  for (int a = 0; a < l.m; ++a) {
    l.sizes[a] = data[a];
    l.strides[a] = data.prod(a + 1, data.ndim());
  }
  return l;
}

template <typename I>
void check_gather_nd_indices(const I* idx, const kernels::GatherNdLayout& l) {
  for (int a = 0; a < l.m; ++a)
    for (int64_t z = 0; z < l.count; ++z)
      if (!l.in_range(idx[a * l.count + z], a))
        throw Error(str("gather_nd: index ", kernels::convert_value<double>(idx[a * l.count + z]),
                        " is out of bounds for axis ", a, " with size ", l.sizes[a]));
}

void gather_nd_forward_cpu(const NoParams&, const ForwardCall& c) {
  const TensorRef &data = c.inputs[0], &indices = c.inputs[1];
  const kernels::GatherNdLayout l = gather_nd_layout(data.shape, indices.shape);
  if (c.req[0] == OpReq::kNull) return;
  dispatch_dtype(indices.dtype, [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.ptr<I>();
    check_gather_nd_indices(idx, l);
    dispatch_dtype(data.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* x = data.ptr<T>();
      T* y = c.outputs[0].ptr<T>();
      parallel_for(l.count, std::max<int64_t>(1, kParallelGrain / l.inner),
                   [&](int64_t z0, int64_t z1) {
                     for (int64_t z = z0; z < z1; ++z)
                       copy_row(y + z * l.inner, x + l.offset(idx, z), l.inner, c.req[0]);
                   });
    });
  });
}

void gather_nd_backward_cpu(const NoParams&, const BackwardCall& c) {
  zero_index_grad(c.in_grads[1], c.req[1]);
  if (c.req[0] == OpReq::kNull) return;
  const TensorRef &indices = c.inputs[1], &grad = c.in_grads[0];
  const kernels::GatherNdLayout l = gather_nd_layout(grad.shape, indices.shape);
  dispatch_dtype(indices.dtype, [&](auto itag) {
    using I = typename decltype(itag)::type;
    const I* idx = indices.ptr<I>();
    dispatch_real(grad.dtype, "gather_nd", [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* dx = grad.ptr<T>();
      const T* g = c.out_grads[0].ptr<T>();
      if (c.req[0] != OpReq::kAdd) std::fill(dx, dx + grad.size(), T(0));
      // Split over the block's columns; positions are visited in order.
      parallel_for(l.inner, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, l.count)),
                   [&](int64_t j0, int64_t j1) {
                     for (int64_t z = 0; z < l.count; ++z) {
                       T* dst = dx + l.offset(idx, z);
                       const T* src = g + z * l.inner;
                       for (int64_t j = j0; j < j1; ++j) dst[j] += src[j];
                     }
                   });
    });
  });
}

// ---- where ----------------------------------------------------------------

void infer_where(const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  // x, y and the output share one shape.
  Shape common = out[0];
  assign_shape(common, in[1], "input 'x'");
  assign_shape(common, in[2], "input 'y'");
  for (size_t i : {1, 2}) in[i] = common;
  out[0] = common;
  const Shape &cond = in[0], &x = in[1];
  if (!cond.rank_known()) return;  // x's shape, or 1-D: it must be given
  if (!x.rank_known()) {
    if (cond.ndim() > 1) assign_shape(in[1], cond, "input 'x'");
    return;
  }
  if (cond.ndim() == 1 && x.ndim() > 1) {
    if (cond[0] >= 0 && x[0] >= 0 && cond[0] != x[0])
      throw ShapeError(str("a 1-D condition of shape ", cond.to_string(),
                           " must have one element per row of x ", x.to_string()));
    return;
  }
  if (cond.ndim() != x.ndim())
    throw ShapeError(str("condition of shape ", cond.to_string(), " must have the shape of x ",
                         x.to_string(), " or be 1-D with one element per row"));
  assign_shape(in[0], x, "input 'condition'");
  assign_shape(in[1], in[0], "input 'x'");
}

void infer_where_type(const NoParams&, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  DTypeVector data{in[1], in[2]}, none;
  infer_same_type(data, none, out, {"x", "y"});
  in[1] = data[0];
  in[2] = data[1];
  if (!in[0]) in[0] = in[1];  // the condition's type is free
}

// Elements of x per condition element.
int64_t where_inner(const TensorRef& cond, const TensorRef& x) {
  return cond.size() == x.size() ? 1 : x.shape.prod(1, x.shape.ndim());
}

void where_forward_cpu(const NoParams&, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const int64_t inner = where_inner(c.inputs[0], c.inputs[1]);
  dispatch_dtype(c.inputs[0].dtype, [&](auto ctag) {
    using C = typename decltype(ctag)::type;
    dispatch_dtype(c.inputs[1].dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      parallel_elements(
          c.outputs[0].size(),
          kernels::WhereSelect<T, C>{c.outputs[0].ptr<T>(), c.inputs[0].ptr<C>(),
                                     c.inputs[1].ptr<T>(), c.inputs[2].ptr<T>(), inner, c.req[0]});
    });
  });
}

void where_backward_cpu(const NoParams&, const BackwardCall& c) {
  zero_index_grad(c.in_grads[0], c.req[0]);
  const int64_t inner = where_inner(c.inputs[0], c.inputs[1]);
  dispatch_dtype(c.inputs[0].dtype, [&](auto ctag) {
    using C = typename decltype(ctag)::type;
    dispatch_dtype(c.out_grads[0].dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t side = 1; side <= 2; ++side) {
        if (c.req[side] == OpReq::kNull) continue;
        parallel_elements(
            c.out_grads[0].size(),
            kernels::WhereGrad<T, C>{c.in_grads[side].ptr<T>(), c.out_grads[0].ptr<T>(),
                                     c.inputs[0].ptr<C>(), inner, side == 1, c.req[side]});
      }
    });
  });
}

void add_one_hot(OpRegistry& r) {
  auto one_hot =
      r.add<OneHotParam>("one_hot")
          .amp(AmpClass::kFloat32)
          .describe("One-hot vectors of length depth for the given indices.")
          .inputs({"indices"})
          .infer_shape(infer_one_hot)
          .infer_type([](const OneHotParam& p, DTypeVector&, DTypeVector&, DTypeVector& out) {
            assign_type(out[0], p.dtype, "output");
          })
          .forward_cpu([](const OneHotParam& p, const ForwardCall& c) {
            if (c.req[0] == OpReq::kNull) return;
            const int64_t n = c.inputs[0].size();
            const int64_t depth = p.depth;
            dispatch_dtype(c.inputs[0].dtype, [&](auto index_tag) {
              using I = typename decltype(index_tag)::type;
              dispatch_dtype(c.outputs[0].dtype, [&](auto out_tag) {
                using T = typename decltype(out_tag)::type;
                const I* indices = c.inputs[0].ptr<I>();
                T* out = c.outputs[0].ptr<T>();
                const T on = value_as<T>(p.on_value), off = value_as<T>(p.off_value);
                parallel_for(n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(depth, 1)),
                             [&](int64_t begin, int64_t end) {
                               for (int64_t i = begin; i < end; ++i) {
                                 // Truncated toward zero, as static_cast<int> in MXNet.
                                 const double v = as_double(indices[i]);
                                 const int64_t hot = v > -1.0 && v < static_cast<double>(depth)
                                                         ? static_cast<int64_t>(v)
                                                         : -1;
                                 for (int64_t j = 0; j < depth; ++j)
                                   store(out + i * depth + j, c.req[0], j == hot ? on : off);
                               }
                             });
              });
            });
          });
#if MX_USE_CUDA
  one_hot.forward(DeviceKind::kGPU, [](const OneHotParam& p, const ForwardCall& c) {
    cuda::one_hot_gpu(c.rctx, "one_hot", c.inputs[0], p.depth, p.on_value, p.off_value,
                      c.outputs[0], c.req[0]);
  });
#else
  (void)one_hot;
#endif
}

void add_take_gather_where(OpRegistry& r) {
  auto take = r.add<TakeParam>("take")
                  .amp(AmpClass::kFloat32)
                  .describe(
                      "Elements along an axis at the given indices: the output's shape is the "
                      "input's with that axis replaced by the indices' shape. The indices get "
                      "a zero gradient.")
                  .inputs({"a", "indices"})
                  .infer_shape(infer_take)
                  .infer_type([](const TakeParam&, DTypeVector& in, DTypeVector&,
                                 DTypeVector& out) { infer_indexing_type(in, out); })
                  .resource(ResourceKind::kTempSpace)
                  .backward_uses(true, false)
                  .forward_cpu(take_forward_cpu)
                  .backward_cpu(take_backward_cpu);

  auto gather_nd =
      r.add<NoParams>("gather_nd")
          .amp(AmpClass::kFloat32)
          .describe(
              "Elements (or blocks) of data at coordinates: indices (m, ...) give, for each "
              "position, indices into data's first m axes (negative ones count from the end; "
              "values outside [-size, size) are an error). The output is (..., data's "
              "remaining axes). The indices get a zero gradient.")
          .inputs({"data", "indices"})
          .infer_shape(infer_gather_nd)
          .infer_type([](const NoParams&, DTypeVector& in, DTypeVector&, DTypeVector& out) {
            infer_indexing_type(in, out);
          })
          .resource(ResourceKind::kTempSpace)
          .backward_uses(true, false)
          .forward_cpu(gather_nd_forward_cpu)
          .backward_cpu(gather_nd_backward_cpu);

  auto where =
      r.add<NoParams>("where")
          .amp(AmpClass::kFloat32)
          .describe(
              "Elements of x where the condition is nonzero (NaN included), of y elsewhere. The "
              "condition has x's shape, or is 1-D and chooses whole rows (x's first axis); its "
              "type may differ from x's. The condition gets a zero gradient.")
          .inputs({"condition", "x", "y"})
          .infer_shape(infer_where)
          .infer_type(infer_where_type)
          .backward_uses(true, false)
          .forward_cpu(where_forward_cpu)
          .backward_cpu(where_backward_cpu);
#if MX_USE_CUDA
  take.forward(DeviceKind::kGPU, [](const TakeParam& p, const ForwardCall& c) {
    cuda::take_gpu(c.rctx, c.inputs[0], c.inputs[1],
                   take_layout(p, c.inputs[0].shape, c.inputs[1].shape), p.mode, c.outputs[0],
                   c.req[0], c.resources);
  });
  take.backward(DeviceKind::kGPU, [](const TakeParam& p, const BackwardCall& c) {
    if (c.req[1] == OpReq::kWrite || c.req[1] == OpReq::kInplace)
      cuda::zero_gpu(c.rctx, "take", c.in_grads[1]);
    cuda::take_backward_gpu(c.rctx, c.inputs[1], c.out_grads[0],
                            take_layout(p, c.in_grads[0].shape, c.inputs[1].shape), p.mode,
                            c.in_grads[0], c.req[0]);
  });
  gather_nd.forward(DeviceKind::kGPU, [](const NoParams&, const ForwardCall& c) {
    cuda::gather_nd_gpu(c.rctx, c.inputs[0], c.inputs[1],
                        gather_nd_layout(c.inputs[0].shape, c.inputs[1].shape), c.outputs[0],
                        c.req[0], c.resources);
  });
  gather_nd.backward(DeviceKind::kGPU, [](const NoParams&, const BackwardCall& c) {
    if (c.req[1] == OpReq::kWrite || c.req[1] == OpReq::kInplace)
      cuda::zero_gpu(c.rctx, "gather_nd", c.in_grads[1]);
    cuda::gather_nd_backward_gpu(c.rctx, c.inputs[1], c.out_grads[0],
                                 gather_nd_layout(c.in_grads[0].shape, c.inputs[1].shape),
                                 c.in_grads[0], c.req[0]);
  });
  where.forward(DeviceKind::kGPU, [](const NoParams&, const ForwardCall& c) {
    cuda::where_gpu(c.rctx, c.inputs[0], c.inputs[1], c.inputs[2],
                    where_inner(c.inputs[0], c.inputs[1]), c.outputs[0], c.req[0]);
  });
  where.backward(DeviceKind::kGPU, [](const NoParams&, const BackwardCall& c) {
    if (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace)
      cuda::zero_gpu(c.rctx, "where", c.in_grads[0]);
    const int64_t inner = where_inner(c.inputs[0], c.inputs[1]);
    for (size_t side = 1; side <= 2; ++side)
      cuda::where_backward_gpu(c.rctx, c.inputs[0], c.out_grads[0], inner, side == 1,
                               c.in_grads[side], c.req[side]);
  });
#else
  (void)take, (void)gather_nd, (void)where;
#endif
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  add_one_hot(r);
  add_take_gather_where(r);
}

}  // namespace mx::op
