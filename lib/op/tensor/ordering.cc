// topk: the k first elements along an axis in value order (largest first,
// or smallest with is_ascend), as values, indices, a 0/1 mask or values and
// indices. The order (ordering_kernels.h) breaks ties by the lower index
// and puts NaN last. The gradient of value/both goes to the picked
// elements; indices and mask have a zero gradient, as in MXNet.
#include <algorithm>
#include <numeric>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/ordering_kernels.h"
#include "op/tensor/tensor_util.h"
#if MX_USE_CUDA
#include "op/cuda/ordering_gpu.h"
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

enum class TopKReturn { kValue, kIndices, kMask, kBoth };

struct TopKParam : Params<TopKParam> {
  std::optional<int> axis = -1;
  int k = 1;
  TopKReturn ret_typ = TopKReturn::kIndices;
  bool is_ascend = false;
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<TopKParam>& d) {
    d.field("axis", &TopKParam::axis)
        .set_default(-1)
        .describe("The axis to search (may be negative); None searches the flattened input.");
    d.field("k", &TopKParam::k)
        .set_default(1)
        .describe("How many elements to pick; k <= 0 picks all of them (a sort).");
    d.field("ret_typ", &TopKParam::ret_typ)
        .set_default(TopKReturn::kIndices)
        .add_enum("both", TopKReturn::kBoth)
        .add_enum("indices", TopKReturn::kIndices)
        .add_enum("mask", TopKReturn::kMask)
        .add_enum("value", TopKReturn::kValue)
        .describe(
            "What to return: the values, their indices, a mask of the input's shape with 1 at "
            "the picked elements, or values and indices.");
    d.field("is_ascend", &TopKParam::is_ascend)
        .set_default(false)
        .describe("Pick the smallest elements first instead of the largest.");
    d.field("dtype", &TopKParam::dtype)
        .set_default(DType::kFloat32)
        .describe("The type of the indices (float16, float32, float64, int32, int64 or uint8).");
  }
  static TopKParam from_strings(const AttrMap& attrs, const std::string& owner) {
    TopKParam p = Params::from_strings(attrs, owner);
    if (p.dtype == DType::kInt8)
      throw InputError(owner +
                       ": parameter 'dtype': int8 cannot hold indices; use float16, "
                       "float32, float64, int32, int64 or uint8");
    return p;
  }
  bool returns_values() const {
    return ret_typ == TopKReturn::kValue || ret_typ == TopKReturn::kBoth;
  }
};

// The rows topk searches and k (all of them for k <= 0).
kernels::TopKGeometry topk_geometry(const TopKParam& p, const Shape& data) {
  kernels::TopKGeometry g;
  if (p.axis) {
    const int axis = normalize_axis(*p.axis, data);
    g.outer = data.prod(0, axis);
    g.n = data[axis];
    g.inner = data.prod(axis + 1, data.ndim());
  } else {
    g.n = data.size();
  }
  g.k = p.k <= 0 ? g.n : p.k;
  if (g.k > g.n)
    throw ShapeError(str("k=", p.k, " is more than the ", g.n, " elements ",
                         p.axis ? "along the axis" : "of the input", " (shape ", data.to_string(),
                         ")"));
  return g;
}

void infer_topk(const TopKParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  if (p.ret_typ == TopKReturn::kMask) {
    assign_shape(out[0], data, "output");
    return;
  }
  Shape o = data;
  if (!p.axis) {
    if (!data.is_known()) return;
    o = Shape{topk_geometry(p, data).k};
  } else {
    const int axis = normalize_axis(*p.axis, data);
    if (data[axis] >= 0) {
      o[axis] = topk_geometry(p, data).k;
    } else {
      o[axis] = p.k > 0 ? p.k : -1;
    }
  }
  for (size_t i = 0; i < out.size(); ++i) assign_shape(out[i], o, "output " + std::to_string(i));
}

void infer_topk_type(const TopKParam& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  switch (p.ret_typ) {
    case TopKReturn::kIndices: assign_type(out[0], p.dtype, "output"); return;
    case TopKReturn::kMask:
      assign_type(out[0], in[0], "output");
      assign_type(in[0], out[0], "input 'data'");
      return;
    case TopKReturn::kValue:
    case TopKReturn::kBoth:
      assign_type(out[0], in[0], "output 0");
      assign_type(in[0], out[0], "input 'data'");
      assign_type(out[1], p.dtype, "output 1");
      return;
  }
}

// The outputs a mode writes: values, indices, mask (null: absent).
struct TopKTargetRefs {
  const TensorRef *values = nullptr, *indices = nullptr, *mask = nullptr;
  OpReq values_req = OpReq::kNull, indices_req = OpReq::kNull, mask_req = OpReq::kNull;
};
TopKTargetRefs topk_targets(const TopKParam& p, const ForwardCall& c) {
  TopKTargetRefs t;
  switch (p.ret_typ) {
    case TopKReturn::kIndices:
      t.indices = &c.outputs[0];
      t.indices_req = c.req[0];
      break;
    case TopKReturn::kMask:
      t.mask = &c.outputs[0];
      t.mask_req = c.req[0];
      break;
    case TopKReturn::kValue:
    case TopKReturn::kBoth:
      t.values = &c.outputs[0];
      t.values_req = c.req[0];
      t.indices = &c.outputs[1];
      // value mode's hidden indices are always written: the gradient reads them.
      t.indices_req = p.ret_typ == TopKReturn::kValue ? OpReq::kWrite : c.req[1];
      break;
  }
  return t;
}

template <typename T, typename I>
void topk_rows_cpu(const kernels::TopKGeometry& g, const kernels::TopKRows<T, I>& f) {
  parallel_for(g.rows(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.n)),
               [&](int64_t r0, int64_t r1) {
                 std::vector<int64_t> order(static_cast<size_t>(g.n));
                 std::vector<T> values(static_cast<size_t>(g.n));
                 for (int64_t row = r0; row < r1; ++row) {
                   for (int64_t e = 0; e < g.n; ++e)
                     values[static_cast<size_t>(e)] = f.element(row, e);
                   std::iota(order.begin(), order.end(), 0);
                   std::partial_sort(
                       order.begin(), order.begin() + g.k, order.end(), [&](int64_t a, int64_t b) {
                         return kernels::topk_before(values[static_cast<size_t>(a)], a,
                                                     values[static_cast<size_t>(b)], b, f.ascend);
                       });
                   for (int64_t r = 0; r < g.k; ++r) {
                     const int64_t e = order[static_cast<size_t>(r)];
                     f.write(row, r, {values[static_cast<size_t>(e)], e});
                   }
                 }
               });
}

void topk_forward_cpu(const TopKParam& p, const ForwardCall& c) {
  const TensorRef& data = c.inputs[0];
  const kernels::TopKGeometry g = topk_geometry(p, data.shape);
  const TopKTargetRefs t = topk_targets(p, c);
  const DType index_dtype = t.indices ? t.indices->dtype : data.dtype;
  dispatch_dtype(data.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_dtype(index_dtype, [&](auto itag) {
      using I = typename decltype(itag)::type;
      kernels::TopKOutputs<T, I> out;
      if (t.values) out.values = t.values->ptr<T>();
      if (t.indices) out.indices = t.indices->ptr<I>();
      if (t.mask && t.mask_req != OpReq::kNull) {
        out.mask = t.mask->ptr<T>();
        if (t.mask_req != OpReq::kAdd) std::fill_n(out.mask, t.mask->size(), T(0.0f));
      }
      out.values_req = t.values_req;
      out.indices_req = t.indices_req;
      out.mask_req = t.mask_req == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite;
      topk_rows_cpu(g, kernels::TopKRows<T, I>{data.ptr<T>(), g.n, g.inner, g.k, p.is_ascend, out});
    });
  });
}

void topk_backward_cpu(const TopKParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  const TensorRef& grad = c.in_grads[0];
  if (req == OpReq::kNull) return;
  dispatch_real(grad.dtype, "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* dx = grad.ptr<T>();
    if (req != OpReq::kAdd) std::fill_n(dx, grad.size(), T(0));
    if (!p.returns_values()) return;  // indices and mask: a zero gradient
    const kernels::TopKGeometry g = topk_geometry(p, grad.shape);
    const TensorRef& indices = c.outputs[1];
    dispatch_dtype(indices.dtype, [&](auto itag) {
      using I = typename decltype(itag)::type;
      parallel_elements(
          c.out_grads[0].size(),
          kernels::TopKScatter<T, I>{dx, c.out_grads[0].ptr<T>(), indices.ptr<I>(), g.n, g.inner,
                                     g.k, req == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite});
    });
  });
}

#if MX_USE_CUDA
void topk_forward_gpu(const TopKParam& p, const ForwardCall& c) {
  const TopKTargetRefs t = topk_targets(p, c);
  cuda::TopKTargets targets;
  if (t.values) targets.values = *t.values;
  if (t.indices) targets.indices = *t.indices;
  if (t.mask && t.mask_req != OpReq::kNull) targets.mask = *t.mask;
  targets.values_req = t.values_req;
  targets.indices_req = t.indices_req;
  targets.mask_req = t.mask_req;
  cuda::topk_gpu(c.rctx, c.inputs[0], topk_geometry(p, c.inputs[0].shape), p.is_ascend, targets);
}

void topk_backward_gpu(const TopKParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  if (!p.returns_values()) {
    if (req != OpReq::kAdd) cuda::zero_gpu(c.rctx, "topk", c.in_grads[0]);
    return;
  }
  cuda::topk_backward_gpu(c.rctx, c.out_grads[0], c.outputs[1],
                          topk_geometry(p, c.in_grads[0].shape), c.in_grads[0], req);
}
#endif

}  // namespace

void register_ordering_ops(OpRegistry& r) {
  auto topk =
      r.add<TopKParam>("topk")
          .amp(AmpClass::kFloat32)
          .describe(
              "The k first elements along an axis, largest first (smallest with is_ascend): "
              "values, indices (in dtype), a 0/1 mask, or values and indices. Ties go to the "
              "lower index and NaN comes last (MXNet leaves both to its sort). The gradient "
              "of value and both goes to the picked elements; indices and mask have none.")
          .inputs({"data"})
          .outputs([](const TopKParam& p) {
            return p.ret_typ == TopKReturn::kIndices || p.ret_typ == TopKReturn::kMask
                       ? std::vector<std::string>{"output"}
                       : std::vector<std::string>{"output0", "output1"};
          })
          .visible_outputs(
              [](const TopKParam& p) { return p.ret_typ == TopKReturn::kBoth ? 2 : 1; })
          .infer_shape(infer_topk)
          .infer_type(infer_topk_type)
          .backward_uses(false, true)
          .backward_ignores_outputs({0})
          .forward_cpu(topk_forward_cpu)
          .backward_cpu(topk_backward_cpu);
#if MX_USE_CUDA
  topk.forward(DeviceKind::kGPU, topk_forward_gpu);
  topk.backward(DeviceKind::kGPU, topk_backward_gpu);
#else
  (void)topk;
#endif
}

}  // namespace mx::op
