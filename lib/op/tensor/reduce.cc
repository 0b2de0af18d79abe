// Reductions over axes: sum, mean, max, min (MXNet's axis/keepdims/exclude
// rules), norm (order 1 or 2) and argmax. The gradient of sum and mean
// spreads the output's gradient over the reduced elements; that of max and
// min goes to every element equal to the result, as in MXNet.
#include <algorithm>
#include <cmath>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/broadcast_util.h"
#if MX_USE_CUDA
#include "op/cuda/reduce_gpu.h"
#endif

namespace mx::op {
namespace {

struct ReduceParam : Params<ReduceParam> {
  std::optional<IntTuple> axis;
  bool keepdims = false;
  bool exclude = false;
  static void declare(ParamDecl<ReduceParam>& d) {
    d.field("axis", &ReduceParam::axis)
        .set_default(std::nullopt)
        .describe("The axes to reduce (may be negative); None or () reduces all of them.");
    d.field("keepdims", &ReduceParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes, with size 1.");
    d.field("exclude", &ReduceParam::exclude)
        .set_default(false)
        .describe("Reduce the axes not listed in axis instead.");
  }
};

// Which axes of an `ndim`-dimensional input are reduced.
std::vector<bool> reduced_axes(const ReduceParam& p, const Shape& in) {
  const int ndim = in.ndim();
  if (!p.axis || p.axis->empty()) return std::vector<bool>(static_cast<size_t>(ndim), true);
  std::vector<bool> listed(static_cast<size_t>(ndim), false);
  for (int64_t a : p.axis->values) {
    const int axis = normalize_axis(a, in);
    if (listed[static_cast<size_t>(axis)])
      throw ShapeError(str("axis ", p.axis->to_string(), " names axis ", axis, " twice"));
    listed[static_cast<size_t>(axis)] = true;
  }
  if (p.exclude) listed.flip();
  return listed;
}

// The input's shape with 1 on the reduced axes: the layout of the output.
Shape kept_shape(const Shape& in, const std::vector<bool>& reduced) {
  Shape s = in;
  for (int i = 0; i < in.ndim(); ++i)
    if (reduced[static_cast<size_t>(i)]) s[i] = 1;
  return s;
}

void infer_reduce(const ReduceParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known()) return;
  const std::vector<bool> reduced = reduced_axes(p, data);
  if (p.keepdims) {
    assign_shape(out[0], kept_shape(data, reduced), "output");
    for (int i = 0; i < data.ndim(); ++i)
      if (!reduced[static_cast<size_t>(i)] && data[i] < 0) data[i] = out[0][i];
    return;
  }
  std::vector<int64_t> dims;
  std::vector<int> from;  // the input axis of each output axis
  for (int i = 0; i < data.ndim(); ++i) {
    if (reduced[static_cast<size_t>(i)]) continue;
    dims.push_back(data[i]);
    from.push_back(i);
  }
  if (dims.empty()) dims.push_back(1);  // MXNet has no 0-d results here
  assign_shape(out[0], Shape(dims), "output");
  for (size_t j = 0; j < from.size(); ++j)
    if (data[from[j]] < 0) data[from[j]] = out[0][static_cast<int>(j)];
}

enum class Reduction { kSum, kMean, kMax, kMin };

template <typename T>
void reduce_forward(Reduction kind, const ReduceParam& p, const ForwardCall& c) {
  const TensorRef& x = c.inputs[0];
  const Shape small = kept_shape(x.shape, reduced_axes(p, x.shape));
  const T* in = x.ptr<T>();
  T* out = c.outputs[0].ptr<T>();
  switch (kind) {
    case Reduction::kSum:
    case Reduction::kMean: {
      SumReducer<T> sum;
      const int64_t count = small.size() == 0 ? 0 : x.size() / small.size();
      if (kind == Reduction::kMean) sum.scale = 1.0 / static_cast<double>(count);
      reduce_to(in, x.shape, out, small, c.req[0], sum);
      break;
    }
    case Reduction::kMax:
      reduce_to(in, x.shape, out, small, c.req[0], ExtremumReducer<T, true>{});
      break;
    case Reduction::kMin:
      reduce_to(in, x.shape, out, small, c.req[0], ExtremumReducer<T, false>{});
      break;
  }
}

template <typename T>
void reduce_backward(Reduction kind, const ReduceParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const Shape small = kept_shape(grad.shape, reduced_axes(p, grad.shape));
  const T* g = c.out_grads[0].ptr<T>();
  T* dx = grad.ptr<T>();
  if (kind == Reduction::kSum || kind == Reduction::kMean) {
    const int64_t count = small.size() == 0 ? 1 : grad.size() / small.size();
    const T scale = kind == Reduction::kMean ? T(1) / static_cast<T>(count) : T(1);
    BroadcastLayout<1> layout(grad.shape, {small});
    layout.parallel_runs([&](int64_t o, const auto& off, int64_t len, const auto& st) {
      for (int64_t j = 0; j < len; ++j) store(dx + o + j, req, g[off[0] + j * st[0]] * scale);
    });
    return;
  }
  // max/min: to every element equal to the result.
  const T* x = c.inputs[0].ptr<T>();
  const T* y = c.outputs[0].ptr<T>();
  BroadcastLayout<2> layout(grad.shape, {small, small});
  layout.parallel_runs([&](int64_t o, const auto& off, int64_t len, const auto& st) {
    for (int64_t j = 0; j < len; ++j) {
      const int64_t s = off[0] + j * st[0];
      store(dx + o + j, req, x[o + j] == y[s] ? g[s] : T(0));
    }
  });
}

#if MX_USE_CUDA
template <typename T>
void reduce_forward_gpu(const char* name, Reduction kind, const ReduceParam& p,
                        const ForwardCall& c) {
  const TensorRef& x = c.inputs[0];
  const Shape small = kept_shape(x.shape, reduced_axes(p, x.shape));
  const ReduceIndex index = make_reduce_index(x.shape, small);
  const cuda::ReduceOp op = kind == Reduction::kMax   ? cuda::ReduceOp::kMax
                            : kind == Reduction::kMin ? cuda::ReduceOp::kMin
                                                      : cuda::ReduceOp::kSum;
  // As reduce_forward: the mean of nothing is 0 * inf = NaN.
  const double scale = kind == Reduction::kMean ? 1.0 / static_cast<double>(index.count) : 1.0;
  cuda::reduce_gpu<T>(name, op, scale, index, x.ptr<T>(), c.outputs[0].ptr<T>(), c.req[0],
                      c.rctx.stream);
}

template <typename T>
void reduce_backward_gpu(const char* name, Reduction kind, const ReduceParam& p,
                         const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const Shape small = kept_shape(grad.shape, reduced_axes(p, grad.shape));
  const BroadcastLayout<1> layout(grad.shape, {small});
  if (kind == Reduction::kSum || kind == Reduction::kMean) {
    const int64_t count = small.size() == 0 ? 1 : grad.size() / small.size();
    const T scale = kind == Reduction::kMean ? T(1) / static_cast<T>(count) : T(1);
    cuda::spread_grad_gpu<T>(name, layout, scale, c.out_grads[0].ptr<T>(), grad.ptr<T>(),
                             grad.size(), req, c.rctx.stream);
    return;
  }
  cuda::extremum_grad_gpu<T>(name, layout, c.out_grads[0].ptr<T>(), c.inputs[0].ptr<T>(),
                             c.outputs[0].ptr<T>(), grad.ptr<T>(), grad.size(), req, c.rctx.stream);
}
#endif

void add_reduction(OpRegistry& r, const char* name, Reduction kind, const char* what,
                   const char* alias) {
  const bool extremum = kind == Reduction::kMax || kind == Reduction::kMin;
  auto b = r.add<ReduceParam>(name).amp(AmpClass::kFloat32);
  if (alias != nullptr) b.alias(alias);
  b.describe(what)
      .inputs({"data"})
      .infer_shape(infer_reduce)
      .backward_uses(extremum, extremum)
      .forward_cpu([kind, name](const ReduceParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name,
                      [&](auto tag) { reduce_forward<typename decltype(tag)::type>(kind, p, c); });
      })
      .backward_cpu([kind, name](const ReduceParam& p, const BackwardCall& c) {
        dispatch_real(c.in_grads[0].dtype, name,
                      [&](auto tag) { reduce_backward<typename decltype(tag)::type>(kind, p, c); });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [kind, name](const ReduceParam& p, const ForwardCall& c) {
     dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
       reduce_forward_gpu<typename decltype(tag)::type>(name, kind, p, c);
     });
   }).backward(DeviceKind::kGPU, [kind, name](const ReduceParam& p, const BackwardCall& c) {
    dispatch_real(c.in_grads[0].dtype, name, [&](auto tag) {
      reduce_backward_gpu<typename decltype(tag)::type>(name, kind, p, c);
    });
  });
#endif
}

// ---- norm ----------------------------------------------------------------

struct NormParam : Params<NormParam> {
  int ord = 2;
  std::optional<IntTuple> axis;
  std::optional<DType> out_dtype;
  bool keepdims = false;
  static void declare(ParamDecl<NormParam>& d) {
    d.field("ord", &NormParam::ord)
        .set_default(2)
        .describe("The order: 1 (sum of |x|) or 2 (square root of the sum of squares).");
    d.field("axis", &NormParam::axis)
        .set_default(std::nullopt)
        .describe("The axes to reduce (may be negative); None or () reduces all of them.");
    d.field("out_dtype", &NormParam::out_dtype)
        .set_default(std::nullopt)
        .describe(
            "The output's type; only None or the input's type (MXNet 1.9.1 fails at run time "
            "for the others).");
    d.field("keepdims", &NormParam::keepdims)
        .set_default(false)
        .describe("Keep the reduced axes, with size 1.");
  }
  static NormParam from_strings(const AttrMap& attrs, const std::string& owner) {
    NormParam p = Params::from_strings(attrs, owner);
    if (p.ord != 1 && p.ord != 2)
      throw InputError(str(owner, ": ord ", p.ord, " is not supported; norm takes ord=1 or 2"));
    return p;
  }
  // The same reduction as the other reductions describe it.
  ReduceParam reduction() const {
    ReduceParam r;
    r.axis = axis;
    r.keepdims = keepdims;
    return r;
  }
};

void infer_norm_type(const NormParam& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  if (p.out_dtype) {
    assign_type(out[0], *p.out_dtype, "output");
    if (in[0] && *in[0] != *p.out_dtype)
      throw InputError(str("out_dtype ", dtype_name(*p.out_dtype), " differs from the input's ",
                           dtype_name(*in[0]), "; norm gives the input's type"));
  }
  assign_type(out[0], in[0], "output");
  assign_type(in[0], out[0], "input 'data'");
}

template <typename T>
void norm_forward(const NormParam& p, const ForwardCall& c) {
  const TensorRef& x = c.inputs[0];
  const Shape small = kept_shape(x.shape, reduced_axes(p.reduction(), x.shape));
  T* out = c.outputs[0].ptr<T>();
  if (p.ord == 1)
    reduce_to(x.ptr<T>(), x.shape, out, small, c.req[0], NormReducer<T, 1>{});
  else
    reduce_to(x.ptr<T>(), x.shape, out, small, c.req[0], NormReducer<T, 2>{});
}

template <typename T>
void norm_backward(const NormParam& p, const BackwardCall& c) {
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const Shape small = kept_shape(grad.shape, reduced_axes(p.reduction(), grad.shape));
  const T* g = c.out_grads[0].ptr<T>();
  const T* x = c.inputs[0].ptr<T>();
  const T* y = c.outputs[0].ptr<T>();
  T* dx = grad.ptr<T>();
  BroadcastLayout<1> layout(grad.shape, {small});
  layout.parallel_runs([&](int64_t o, const auto& off, int64_t len, const auto& st) {
    for (int64_t j = 0; j < len; ++j) {
      const int64_t s = off[0] + j * st[0];
      store(dx + o + j, req, g[s] * norm_derivative(p.ord, x[o + j], y[s]));
    }
  });
}

#if MX_USE_CUDA
template <typename T>
void norm_forward_gpu(const NormParam& p, const ForwardCall& c) {
  const TensorRef& x = c.inputs[0];
  const Shape small = kept_shape(x.shape, reduced_axes(p.reduction(), x.shape));
  cuda::reduce_gpu<T>("norm", p.ord == 1 ? cuda::ReduceOp::kNorm1 : cuda::ReduceOp::kNorm2, 1.0,
                      make_reduce_index(x.shape, small), x.ptr<T>(), c.outputs[0].ptr<T>(),
                      c.req[0], c.rctx.stream);
}

template <typename T>
void norm_backward_gpu(const NormParam& p, const BackwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const TensorRef& grad = c.in_grads[0];
  const Shape small = kept_shape(grad.shape, reduced_axes(p.reduction(), grad.shape));
  cuda::norm_grad_gpu<T>("norm", BroadcastLayout<1>(grad.shape, {small}), p.ord,
                         c.out_grads[0].ptr<T>(), c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(),
                         grad.ptr<T>(), grad.size(), c.req[0], c.rctx.stream);
}
#endif

void add_norm(OpRegistry& r) {
  auto b = r.add<NormParam>("norm").amp(AmpClass::kFloat32);
  b.describe(
       "The norm of order 1 or 2 over the given axes. Its gradient is sign(x) (order 1) or "
       "x / norm (order 2), 0 where the norm is 0 (MXNet 1.9.1 gives NaN there).")
      .inputs({"data"})
      .infer_shape([](const NormParam& p, ShapeVector& in, ShapeVector& aux, ShapeVector& out) {
        infer_reduce(p.reduction(), in, aux, out);
      })
      .infer_type(infer_norm_type)
      .backward_uses(true, true)
      .forward_cpu([](const NormParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "norm",
                      [&](auto tag) { norm_forward<typename decltype(tag)::type>(p, c); });
      })
      .backward_cpu([](const NormParam& p, const BackwardCall& c) {
        dispatch_real(c.in_grads[0].dtype, "norm",
                      [&](auto tag) { norm_backward<typename decltype(tag)::type>(p, c); });
      });
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [](const NormParam& p, const ForwardCall& c) {
     dispatch_real(c.inputs[0].dtype, "norm",
                   [&](auto tag) { norm_forward_gpu<typename decltype(tag)::type>(p, c); });
   }).backward(DeviceKind::kGPU, [](const NormParam& p, const BackwardCall& c) {
    dispatch_real(c.in_grads[0].dtype, "norm",
                  [&](auto tag) { norm_backward_gpu<typename decltype(tag)::type>(p, c); });
  });
#endif
}

// ---- argmax ----------------------------------------------------------------

struct ArgmaxParam : Params<ArgmaxParam> {
  std::optional<int> axis;
  bool keepdims = false;
  static void declare(ParamDecl<ArgmaxParam>& d) {
    d.field("axis", &ArgmaxParam::axis)
        .set_default(std::nullopt)
        .describe("The axis to search; None searches the flattened input.");
    d.field("keepdims", &ArgmaxParam::keepdims)
        .set_default(false)
        .describe("Keep the searched axis, with size 1.");
  }
};

void infer_argmax(const ArgmaxParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  if (!p.axis) {
    assign_shape(out[0], p.keepdims ? Shape::filled(data.ndim(), 1) : Shape{1}, "output");
    return;
  }
  const int axis = normalize_axis(*p.axis, data);
  std::vector<int64_t> dims = data.to_vector();
  if (p.keepdims)
    dims[static_cast<size_t>(axis)] = 1;
  else
    dims.erase(dims.begin() + axis);
  if (dims.empty()) dims.push_back(1);
  assign_shape(out[0], Shape(dims), "output");
}

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return v != v;
}

template <typename T>
T index_as(int64_t i) {
  if constexpr (is_half_like_v<T>)
    return T(static_cast<float>(i));
  else
    return static_cast<T>(i);
}

// The index of the first largest value along the axis (NaN counts as the
// largest, as in NumPy and MXNet), written in the input's type as MXNet does.
template <typename T>
void argmax_kernel(const ArgmaxParam& p, const ForwardCall& c) {
  const TensorRef& x = c.inputs[0];
  const int axis = p.axis ? normalize_axis(*p.axis, x.shape) : 0;
  const int64_t outer = p.axis ? x.shape.prod(0, axis) : 1;
  const int64_t size = p.axis ? x.shape[axis] : x.size();
  const int64_t inner = p.axis ? x.shape.prod(axis + 1, x.shape.ndim()) : 1;
  const T* in = x.ptr<T>();
  T* out = c.outputs[0].ptr<T>();
  const OpReq req = c.req[0];
  if (req == OpReq::kNull || size == 0) return;
  parallel_for(outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, size * inner)),
               [&](int64_t o0, int64_t o1) {
                 std::vector<T> best(static_cast<size_t>(inner));
                 std::vector<int64_t> index(static_cast<size_t>(inner));
                 for (int64_t o = o0; o < o1; ++o) {
                   const T* base = in + o * size * inner;
                   std::copy(base, base + inner, best.begin());
                   std::fill(index.begin(), index.end(), 0);
                   // Row by row, so that the inner axis is read contiguously.
                   for (int64_t k = 1; k < size; ++k) {
                     const T* row = base + k * inner;
                     for (int64_t j = 0; j < inner; ++j) {
                       T& b = best[static_cast<size_t>(j)];
                       if (!is_nan(b) && (row[j] > b || is_nan(row[j]))) {
                         b = row[j];
                         index[static_cast<size_t>(j)] = k;
                       }
                     }
                   }
                   for (int64_t j = 0; j < inner; ++j)
                     store(out + o * inner + j, req, index_as<T>(index[static_cast<size_t>(j)]));
                 }
               });
}

}  // namespace

void register_reduce_ops(OpRegistry& r) {
  add_reduction(r, "sum", Reduction::kSum, "Sums over the given axes.", "sum_axis");
  add_reduction(r, "mean", Reduction::kMean, "Averages over the given axes.", nullptr);
  add_reduction(r, "max", Reduction::kMax, "The maximum over the given axes.", "max_axis");
  add_reduction(r, "min", Reduction::kMin, "The minimum over the given axes.", "min_axis");
  add_norm(r);

  // MXNet defines no gradient for argmax.
  auto argmax = r.add<ArgmaxParam>("argmax").amp(AmpClass::kFloat32);
  argmax.describe("Indices of the largest values along an axis (in the input's type).")
      .inputs({"data"})
      .infer_shape(infer_argmax)
      .forward_cpu([](const ArgmaxParam& p, const ForwardCall& c) {
        dispatch_dtype(c.inputs[0].dtype,
                       [&](auto tag) { argmax_kernel<typename decltype(tag)::type>(p, c); });
      });
#if MX_USE_CUDA
  argmax.forward(DeviceKind::kGPU, [](const ArgmaxParam& p, const ForwardCall& c) {
    const TensorRef& x = c.inputs[0];
    const int axis = p.axis ? normalize_axis(*p.axis, x.shape) : 0;
    const int64_t outer = p.axis ? x.shape.prod(0, axis) : 1;
    const int64_t size = p.axis ? x.shape[axis] : x.size();
    const int64_t inner = p.axis ? x.shape.prod(axis + 1, x.shape.ndim()) : 1;
    dispatch_dtype(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::argmax_gpu<T>("argmax", x.ptr<T>(), c.outputs[0].ptr<T>(), outer, size, inner, c.req[0],
                          c.rctx.stream);
    });
  });
#endif
}

}  // namespace mx::op
