// SequenceMask, SequenceLast and SequenceReverse with MXNet 1.9.1's
// parameters: data (steps, batch, ...) for axis 0 or (batch, steps, ...) for
// axis 1 (SequenceReverse: axis 0 only), of at least 2 dimensions, and with
// use_sequence_length a second input sequence_length (batch,) of any dtype
// (values truncated toward zero). The gradient goes to data only; the
// lengths' gradient is 0.
//
// Where mx differs from MXNet 1.9.1: lengths are clamped to [0, steps].
// MXNet reads outside the array for SequenceLast with a length of 0 or
// beyond the steps (returning whatever memory holds) and for SequenceReverse
// beyond the steps, and crashes on negative lengths; here SequenceLast of an
// empty sequence is 0, and a longer length means the whole sequence. And
// MXNet's SequenceLast backward without lengths reads step indices from
// uninitialized temporary space (its forward fills them, its backward not).
//
// The CPU kernels copy whole rows of the trailing dimensions (contiguous),
// rows in parallel; the GPU kernels run the element functors of
// sequence_kernels.h.
#include <algorithm>
#include <cstring>
#include <functional>
#include <vector>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/sequence_kernels.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#include "op/cuda/sequence_gpu.h"
#endif

namespace mx::op {
namespace {

struct SequenceParam : Params<SequenceParam> {
  bool use_sequence_length = false;
  int axis = 0;
  static void declare(ParamDecl<SequenceParam>& d) {
    d.field("use_sequence_length", &SequenceParam::use_sequence_length)
        .set_default(false)
        .describe("Take a second input `sequence_length` (one length per batch entry).");
    d.field("axis", &SequenceParam::axis)
        .set_default(0)
        .set_range(0, 1)
        .describe("The sequence axis: 0 (steps, batch, ...) or 1 (batch, steps, ...).");
  }
};

struct SequenceMaskParam : Params<SequenceMaskParam> {
  bool use_sequence_length = false;
  float value = 0.0f;
  int axis = 0;
  static void declare(ParamDecl<SequenceMaskParam>& d) {
    d.field("use_sequence_length", &SequenceMaskParam::use_sequence_length)
        .set_default(false)
        .describe("Take a second input `sequence_length` (one length per batch entry).");
    d.field("value", &SequenceMaskParam::value)
        .set_default(0.0f)
        .describe("The value written at the steps past each sequence's length.");
    d.field("axis", &SequenceMaskParam::axis)
        .set_default(0)
        .set_range(0, 1)
        .describe("The sequence axis: 0 (steps, batch, ...) or 1 (batch, steps, ...).");
  }
};

struct SequenceReverseParam : Params<SequenceReverseParam> {
  bool use_sequence_length = false;
  int axis = 0;
  static void declare(ParamDecl<SequenceReverseParam>& d) {
    d.field("use_sequence_length", &SequenceReverseParam::use_sequence_length)
        .set_default(false)
        .describe("Take a second input `sequence_length` (one length per batch entry).");
    d.field("axis", &SequenceReverseParam::axis)
        .set_default(0)
        .describe("The sequence axis; only 0 (steps, batch, ...), as in MXNet 1.9.1.");
  }
  static SequenceReverseParam from_strings(const AttrMap& attrs, const std::string& owner) {
    SequenceReverseParam p = Params::from_strings(attrs, owner);
    if (p.axis != 0)
      throw InputError(str(owner, ": axis ", p.axis,
                           " is not supported; SequenceReverse reverses along axis 0 only"));
    return p;
  }
};

template <typename P>
std::vector<std::string> sequence_inputs(const P& p) {
  if (p.use_sequence_length) return {"data", "sequence_length"};
  return {"data"};
}

// The data's batch axis (the one that is not the sequence axis).
int batch_axis(int axis) { return axis == 0 ? 1 : 0; }

// data: at least 2-D; sequence_length: (batch,). Fills the data's batch
// dimension from the lengths when only they know it.
void infer_data_and_lengths(bool with_length, int axis, ShapeVector& in) {
  Shape& data = in[0];
  if (data.rank_known() && data.ndim() < 2)
    throw ShapeError(
        str("input 'data' must have at least 2 dimensions, but has shape ", data.to_string()));
  if (!with_length || !data.rank_known()) return;
  const int b = batch_axis(axis);
  assign_shape(in[1], Shape{data[b]}, "input 'sequence_length'");
  if (data[b] < 0 && in[1].rank_known() && in[1].ndim() == 1 && in[1][0] >= 0) {
    Shape d = Shape::filled(data.ndim(), -1);
    d[b] = in[1][0];
    assign_shape(data, d, "input 'data'");
  }
}

// Same-shape operators (SequenceMask, SequenceReverse).
void infer_same_as_data(bool with_length, int axis, ShapeVector& in, ShapeVector& out) {
  assign_shape(in[0], out[0], "input 'data'");
  infer_data_and_lengths(with_length, axis, in);
  assign_shape(out[0], in[0], "output");
}

// SequenceLast: (batch, data.shape[2:]).
void infer_last(const SequenceParam& p, ShapeVector& in, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known() && out[0].rank_known()) data = Shape::filled(out[0].ndim() + 1, -1);
  infer_data_and_lengths(p.use_sequence_length, p.axis, in);
  if (!data.rank_known()) return;
  const int b = batch_axis(p.axis);
  if (out[0].rank_known() && out[0].ndim() == data.ndim() - 1) {
    Shape d = Shape::filled(data.ndim(), -1);
    d[b] = out[0][0];
    for (int i = 2; i < data.ndim(); ++i) d[i] = out[0][i - 1];
    assign_shape(data, d, "input 'data'");
  }
  std::vector<int64_t> dims{data[b]};
  for (int i = 2; i < data.ndim(); ++i) dims.push_back(data[i]);
  assign_shape(out[0], Shape(dims), "output");
  infer_data_and_lengths(p.use_sequence_length, p.axis, in);
}

// The lengths take data's dtype when nothing else says (MXNet's rule); any
// dtype is accepted.
void infer_sequence_type(bool with_length, DTypeVector& in, DTypeVector& out) {
  assign_type(in[0], out[0], "input 'data'");
  assign_type(out[0], in[0], "output");
  if (with_length && !in[1]) in[1] = in[0];
}

SequenceView sequence_view(const Shape& data, int axis) {
  return {data[0], data[1], data.prod(2, data.ndim()), axis};
}

SequenceLengths lengths_ref(bool with_length, const std::vector<TensorRef>& inputs) {
  if (!with_length) return {};
  return {inputs[1].data, inputs[1].dtype};
}

// Each batch entry's length in [0, steps].
std::vector<int64_t> clamped_lengths(const SequenceView& v, const SequenceLengths& lengths) {
  std::vector<int64_t> n(static_cast<size_t>(v.batch()));
  for (int64_t b = 0; b < v.batch(); ++b) n[static_cast<size_t>(b)] = lengths.of(b, v.steps());
  return n;
}

// dst[0, n) (req) src[0, n), or (req) `value` everywhere when src is null.
template <typename T>
void store_row(T* dst, const T* src, T value, int64_t n, OpReq req) {
  if (req == OpReq::kNull) return;
  if (req == OpReq::kAdd) {
    for (int64_t k = 0; k < n; ++k) kernels::store_value(dst + k, req, src ? src[k] : value);
  } else if (src == nullptr) {
    std::fill(dst, dst + n, value);
  } else if (dst != src) {
    std::copy(src, src + n, dst);
  }
}

// fn(t, b, row) for every row of `rest` elements (rows in parallel).
template <typename Fn>
void for_rows(const SequenceView& v, Fn fn) {
  parallel_for(v.d0 * v.d1, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(v.rest, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t row = r0; row < r1; ++row) {
                   int64_t t, b;
                   v.locate(row * v.rest, t, b);
                   fn(t, b, row);
                 }
               });
}

// The lengths' gradient: 0 (req write), unchanged (add, null).
void zero_length_grad(const BackwardCall& c) {
  if (c.req.size() < 2 || (c.req[1] != OpReq::kWrite && c.req[1] != OpReq::kInplace)) return;
  std::memset(c.in_grads[1].data, 0,
              static_cast<size_t>(c.in_grads[1].size()) * dtype_size(c.in_grads[1].dtype));
}

template <typename T>
T value_as(float v) {
  return kernels::convert_value<T>(v);
}

// ---- CPU kernels ------------------------------------------------------------------

// SequenceMask and its gradient (value 0): x where t < length, else value.
template <typename T>
void mask_cpu(const SequenceView& v, const SequenceLengths& lengths, const T* x, T* y, T value,
              OpReq req) {
  if (req == OpReq::kNull) return;
  const std::vector<int64_t> n = clamped_lengths(v, lengths);
  for_rows(v, [&](int64_t t, int64_t b, int64_t row) {
    const bool keep = t < n[static_cast<size_t>(b)];
    store_row(y + row * v.rest, keep ? x + row * v.rest : nullptr, value, v.rest, req);
  });
}

template <typename T>
void last_cpu(const SequenceView& v, const SequenceLengths& lengths, const T* x, T* y, OpReq req) {
  if (req == OpReq::kNull) return;
  const std::vector<int64_t> n = clamped_lengths(v, lengths);
  parallel_for(v.batch(), std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(v.rest, 1)),
               [&](int64_t b0, int64_t b1) {
                 for (int64_t b = b0; b < b1; ++b) {
                   const int64_t len = n[static_cast<size_t>(b)];
                   const T* src = len > 0 ? x + v.index(len - 1, b, 0) : nullptr;
                   store_row(y + b * v.rest, src, value_as<T>(0.0f), v.rest, req);
                 }
               });
}

template <typename T>
void last_grad_cpu(const SequenceView& v, const SequenceLengths& lengths, const T* dy, T* dx,
                   OpReq req) {
  if (req == OpReq::kNull) return;
  const std::vector<int64_t> n = clamped_lengths(v, lengths);
  for_rows(v, [&](int64_t t, int64_t b, int64_t row) {
    const bool last = t + 1 == n[static_cast<size_t>(b)];
    store_row(dx + row * v.rest, last ? dy + b * v.rest : nullptr, value_as<T>(0.0f), v.rest, req);
  });
}

// SequenceReverse and its gradient (the same map).
template <typename T>
void reverse_cpu(const SequenceView& v, const SequenceLengths& lengths, const T* x, T* y,
                 OpReq req) {
  if (req == OpReq::kNull) return;
  const std::vector<int64_t> n = clamped_lengths(v, lengths);
  for_rows(v, [&](int64_t t, int64_t b, int64_t row) {
    const int64_t len = n[static_cast<size_t>(b)];
    const int64_t from = t < len ? len - 1 - t : t;
    store_row(y + row * v.rest, x + v.index(from, b, 0), value_as<T>(0.0f), v.rest, req);
  });
}

// ---- registration ----------------------------------------------------------------

enum class SequenceOp { kMask, kLast, kReverse };

#if MX_USE_CUDA
void run_gpu(SequenceOp op, bool gradient, const cuda::SequenceCall& call, const RunContext& rctx,
             const char* name) {
  if (call.req == OpReq::kNull) return;
  if (op == SequenceOp::kMask)
    cuda::sequence_mask_gpu(call, rctx.stream, name);
  else if (op == SequenceOp::kReverse)
    cuda::sequence_reverse_gpu(call, rctx.stream, name);
  else if (gradient)
    cuda::sequence_last_grad_gpu(call, rctx.stream, name);
  else
    cuda::sequence_last_gpu(call, rctx.stream, name);
}
#endif

// The CPU kernel of `op`: forward (x the data, y the output) or backward
// (x the output gradient, y the data gradient); value: SequenceMask's.
void run_cpu(SequenceOp op, bool gradient, const SequenceView& v, const SequenceLengths& lengths,
             const TensorRef& x, const TensorRef& y, float value, OpReq req) {
  dispatch_dtype(x.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == SequenceOp::kMask)
      mask_cpu(v, lengths, x.ptr<T>(), y.ptr<T>(), value_as<T>(gradient ? 0.0f : value), req);
    else if (op == SequenceOp::kReverse)
      reverse_cpu(v, lengths, x.ptr<T>(), y.ptr<T>(), req);
    else if (gradient)
      last_grad_cpu(v, lengths, x.ptr<T>(), y.ptr<T>(), req);
    else
      last_cpu(v, lengths, x.ptr<T>(), y.ptr<T>(), req);
  });
}

template <typename P>
void add_sequence_op(OpRegistry& r, const char* name, SequenceOp op, const char* what,
                     std::function<float(const P&)> value_of,
                     std::function<void(const P&, ShapeVector&, ShapeVector&)> infer) {
  auto b = r.add<P>(name)
               .amp(AmpClass::kFloat32)
               .describe(what)
               .inputs([](const P& p) { return sequence_inputs(p); })
               .infer_shape([infer](const P& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
                 infer(p, in, out);
               })
               .infer_type([](const P& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
                 infer_sequence_type(p.use_sequence_length, in, out);
               })
               .backward_uses(true, false)
               .forward_cpu([=](const P& p, const ForwardCall& c) {
                 const SequenceView v = sequence_view(c.inputs[0].shape, p.axis);
                 run_cpu(op, false, v, lengths_ref(p.use_sequence_length, c.inputs), c.inputs[0],
                         c.outputs[0], value_of(p), c.req[0]);
               })
               .backward_cpu([=](const P& p, const BackwardCall& c) {
                 const SequenceView v = sequence_view(c.inputs[0].shape, p.axis);
                 if (p.use_sequence_length) zero_length_grad(c);
                 if (c.req[0] == OpReq::kNull) return;
                 run_cpu(op, true, v, lengths_ref(p.use_sequence_length, c.inputs), c.out_grads[0],
                         c.in_grads[0], 0.0f, c.req[0]);
               });
  if (op == SequenceOp::kMask) b.inplace({{0, 0}}).backward_inplace();
#if MX_USE_CUDA
  b.forward(DeviceKind::kGPU, [=](const P& p, const ForwardCall& c) {
    const cuda::SequenceCall call{
        sequence_view(c.inputs[0].shape, p.axis),     c.inputs[0], c.outputs[0],
        lengths_ref(p.use_sequence_length, c.inputs), value_of(p), c.req[0]};
    run_gpu(op, false, call, c.rctx, name);
  });
  b.backward(DeviceKind::kGPU, [=](const P& p, const BackwardCall& c) {
    if (p.use_sequence_length && c.req.size() > 1 &&
        (c.req[1] == OpReq::kWrite || c.req[1] == OpReq::kInplace))
      cuda::fill_zero(c.in_grads[1], c.rctx.stream, name);
    const cuda::SequenceCall call{
        sequence_view(c.inputs[0].shape, p.axis),     c.out_grads[0], c.in_grads[0],
        lengths_ref(p.use_sequence_length, c.inputs), 0.0f,           c.req[0]};
    run_gpu(op, true, call, c.rctx, name);
  });
#endif
}

}  // namespace

void register_sequence_ops(OpRegistry& r) {
  add_sequence_op<SequenceMaskParam>(
      r, "SequenceMask", SequenceOp::kMask,
      "Sets the steps of each sequence past its length to `value`. Lengths are clamped to "
      "[0, steps] (MXNet 1.9.1 crashes on negative ones).",
      [](const SequenceMaskParam& p) { return p.value; },
      [](const SequenceMaskParam& p, ShapeVector& in, ShapeVector& out) {
        infer_same_as_data(p.use_sequence_length, p.axis, in, out);
      });
  add_sequence_op<SequenceParam>(
      r, "SequenceLast", SequenceOp::kLast,
      "The last step of each sequence (step length - 1), (batch, data.shape[2:]). Lengths are "
      "clamped to [0, steps] and an empty sequence gives 0 (MXNet 1.9.1 reads outside the array "
      "for lengths of 0 or beyond the steps). Without lengths MXNet 1.9.1's gradient reads "
      "uninitialized step indices and writes outside the array; mx's is the derivative.",
      [](const SequenceParam&) { return 0.0f; },
      [](const SequenceParam& p, ShapeVector& in, ShapeVector& out) { infer_last(p, in, out); });
  add_sequence_op<SequenceReverseParam>(
      r, "SequenceReverse", SequenceOp::kReverse,
      "Reverses the first length steps of each sequence along axis 0; later steps keep their "
      "place. Lengths are clamped to [0, steps] (MXNet 1.9.1 reads outside the array beyond the "
      "steps).",
      [](const SequenceReverseParam&) { return 0.0f; },
      [](const SequenceReverseParam& p, ShapeVector& in, ShapeVector& out) {
        infer_same_as_data(p.use_sequence_length, p.axis, in, out);
      });
}

}  // namespace mx::op
