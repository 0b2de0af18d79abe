// softmax and log_softmax along one axis, with an optional temperature, an
// output dtype and (softmax only) per-vector lengths from a second input.
#include "op/nn/softmax.h"

#include <cstring>

#include "op/axes.h"
#include "op/infer_util.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#endif

namespace mx::op {
namespace {

struct SoftmaxParam : Params<SoftmaxParam> {
  int axis = -1;
  std::optional<double> temperature;
  std::optional<DType> dtype;
  std::optional<bool> use_length;
  static void declare(ParamDecl<SoftmaxParam>& d) {
    d.field("axis", &SoftmaxParam::axis)
        .set_default(-1)
        .describe("The axis along which to compute; may be negative.");
    d.field("temperature", &SoftmaxParam::temperature)
        .set_default(std::nullopt)
        .describe("Divides the input by this before the softmax (None: 1).");
    d.field("dtype", &SoftmaxParam::dtype)
        .set_default(std::nullopt)
        .describe("The output's element type (float32 or float64; None: the input's).");
    d.field("use_length", &SoftmaxParam::use_length)
        .set_default(false)
        .describe(
            "Take a second input `length` (an integer per vector: data's shape without the "
            "axis): only the first length[i] elements of each vector take part, the rest of the "
            "output is 0. Lengths beyond the axis count as the whole axis (MXNet 1.9.1 reads "
            "past the vector).");
  }
  bool with_length() const { return use_length.value_or(false); }
  double t() const { return temperature.value_or(1.0); }
};

void infer_softmax_shape(const SoftmaxParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  assign_shape(data, out[0], "input 'data'");
  assign_shape(out[0], data, "output");
  if (!data.rank_known()) return;
  const int axis = normalize_axis(p.axis, data);
  if (p.with_length()) {
    std::vector<int64_t> dims = data.to_vector();
    dims.erase(dims.begin() + axis);
    if (dims.empty()) dims.push_back(1);
    assign_shape(in[1], Shape(dims), "input 'length'");
  }
}

void check_real(std::optional<DType> t, const std::string& what) {
  if (t && *t != DType::kFloat32 && *t != DType::kFloat64)
    throw InputError(str(what, " must be float32 or float64, not ", dtype_name(*t)));
}

void infer_softmax_type(const SoftmaxParam& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  if (p.dtype) {
    check_real(p.dtype, "dtype");
    assign_type(out[0], p.dtype, "output");
  } else {
    assign_type(in[0], out[0], "input 'data'");
    assign_type(out[0], in[0], "output");
  }
  check_real(in[0], "input 'data'");
  if (p.with_length() && in[1] && is_floating(*in[1]))
    throw InputError(str("input 'length' must have an integer type, not ", dtype_name(*in[1])));
}

// The length input as int64 values, one per vector.
std::vector<int64_t> lengths_of(const TensorRef& t) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  dispatch_dtype(t.dtype, [&](auto tag) {
    using L = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<L>) {
      const L* p = t.ptr<L>();
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
    } else {
      throw Error(str("input 'length' must have an integer type, not ", dtype_name(t.dtype)));
    }
  });
  return v;
}

#if MX_USE_CUDA
// The length input where a kernel on its device reads it.
LengthRef length_ref(const TensorRef& t) {
  if (is_floating(t.dtype))
    throw Error(str("input 'length' must have an integer type, not ", dtype_name(t.dtype)));
  return {t.data, t.dtype};
}
#endif

// Calls fn(TypeTag<TI>, TypeTag<TO>) for the input and output types.
// Whether softmax_rows (and its backward) take the case: float32 in and
// out, the last axis, no lengths, not log, written rather than added.
bool rows_of_float(const SoftmaxLayout& l, DType in, DType out, bool log, bool no_lengths,
                   OpReq req) {
  return l.inner == 1 && in == DType::kFloat32 && out == DType::kFloat32 && !log && no_lengths &&
         (req == OpReq::kWrite || req == OpReq::kInplace);
}

template <typename Fn>
void dispatch_io(DType in, DType out, const char* op, Fn&& fn) {
  dispatch_real(in, op, [&](auto ti) { dispatch_real(out, op, [&](auto to) { fn(ti, to); }); });
}

void add(OpRegistry& r, const char* name, bool log, const char* what) {
  r.add<SoftmaxParam>(name)
      .amp(AmpClass::kFloat32)
      .describe(what)
      .inputs([log](const SoftmaxParam& p) {
        if (p.with_length() && !log) return std::vector<std::string>{"data", "length"};
        return std::vector<std::string>{"data"};
      })
      .infer_shape(
          [log](const SoftmaxParam& p, ShapeVector& in, ShapeVector& aux, ShapeVector& out) {
            if (log && p.with_length())
              throw ShapeError("use_length is not supported by log_softmax (it takes no length)");
            infer_softmax_shape(p, in, aux, out);
          })
      .infer_type(infer_softmax_type)
      .backward_uses(true, true)
      .forward_cpu([log, name](const SoftmaxParam& p, const ForwardCall& c) {
        const TensorRef& x = c.inputs[0];
        const SoftmaxLayout l = softmax_layout(x.shape, normalize_axis(p.axis, x.shape));
        std::vector<int64_t> lengths;
        if (p.with_length()) lengths = lengths_of(c.inputs[1]);
        if (rows_of_float(l, x.dtype, c.outputs[0].dtype, log, lengths.empty(), c.req[0])) {
          softmax_rows(x.ptr<float>(), c.outputs[0].ptr<float>(), l, p.t());
          return;
        }
        dispatch_io(x.dtype, c.outputs[0].dtype, name, [&](auto ti, auto to) {
          using TI = typename decltype(ti)::type;
          using TO = typename decltype(to)::type;
          softmax_forward(x.ptr<TI>(), c.outputs[0].ptr<TO>(), l, p.t(), log, c.req[0],
                          lengths.empty() ? nullptr : lengths.data());
        });
      })
      .backward_cpu([log, name](const SoftmaxParam& p, const BackwardCall& c) {
        const TensorRef& dx = c.in_grads[0];
        const SoftmaxLayout l = softmax_layout(dx.shape, normalize_axis(p.axis, dx.shape));
        std::vector<int64_t> lengths;
        if (p.with_length()) {
          lengths = lengths_of(c.inputs[1]);
          // The length input has no gradient.
          if (c.req.size() > 1 && c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)
            std::memset(
                c.in_grads[1].data, 0,
                static_cast<size_t>(c.in_grads[1].size()) * dtype_size(c.in_grads[1].dtype));
        }
        if (rows_of_float(l, dx.dtype, c.outputs[0].dtype, log, lengths.empty(), c.req[0])) {
          softmax_rows_backward(c.outputs[0].ptr<float>(), c.out_grads[0].ptr<float>(),
                                dx.ptr<float>(), l, p.t());
          return;
        }
        dispatch_io(dx.dtype, c.outputs[0].dtype, name, [&](auto ti, auto to) {
          using TI = typename decltype(ti)::type;
          using TO = typename decltype(to)::type;
          softmax_backward(c.outputs[0].ptr<TO>(), c.out_grads[0].ptr<TO>(), dx.ptr<TI>(), l, p.t(),
                           log, c.req[0], lengths.empty() ? nullptr : lengths.data());
        });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [log, name](const SoftmaxParam& p, const ForwardCall& c) {
                 const TensorRef& x = c.inputs[0];
                 const SoftmaxLayout l = softmax_layout(x.shape, normalize_axis(p.axis, x.shape));
                 const LengthRef lengths = p.with_length() ? length_ref(c.inputs[1]) : LengthRef{};
                 dispatch_io(x.dtype, c.outputs[0].dtype, name, [&](auto ti, auto to) {
                   using TI = typename decltype(ti)::type;
                   using TO = typename decltype(to)::type;
                   const SoftmaxRowForward<TI, TO> f{
                       x.ptr<TI>(), c.outputs[0].ptr<TO>(), l, 1.0 / p.t(), log, c.req[0], lengths};
                   cuda::softmax_rows_forward(f, c.rctx.stream, name);
                 });
               })
      .backward(DeviceKind::kGPU,
                [log, name](const SoftmaxParam& p, const BackwardCall& c) {
                  const TensorRef& dx = c.in_grads[0];
                  const SoftmaxLayout l =
                      softmax_layout(dx.shape, normalize_axis(p.axis, dx.shape));
                  LengthRef lengths;
                  if (p.with_length()) {
                    lengths = length_ref(c.inputs[1]);
                    // The length input has no gradient.
                    if (c.req.size() > 1 && c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)
                      cuda::fill_zero(c.in_grads[1], c.rctx.stream, name);
                  }
                  dispatch_io(dx.dtype, c.outputs[0].dtype, name, [&](auto ti, auto to) {
                    using TI = typename decltype(ti)::type;
                    using TO = typename decltype(to)::type;
                    const SoftmaxRowBackward<TI, TO> f{c.outputs[0].ptr<TO>(),
                                                       c.out_grads[0].ptr<TO>(),
                                                       dx.ptr<TI>(),
                                                       l,
                                                       1.0 / p.t(),
                                                       log,
                                                       c.req[0],
                                                       lengths};
                    cuda::softmax_rows_backward(f, c.rctx.stream, name);
                  });
                })
#endif
      ;
}

}  // namespace

void register_softmax_ops(OpRegistry& r) {
  add(r, "softmax", false, "exp(x / t) normalized to sum to 1 along an axis.");
  add(r, "log_softmax", true, "The logarithm of softmax along an axis, computed stably.");
}

}  // namespace mx::op
