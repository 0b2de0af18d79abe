// Output (loss) layers: SoftmaxOutput and the regression outputs. Their
// forward pass gives predictions; their backward pass gives the gradient of
// the loss they stand for (cross entropy, squared error, ...) from the label
// input, which itself gets no gradient. The gradient functors
// (output_kernels.h) are shared with the GPU kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "op/infer_util.h"
#include "op/nn/output_kernels.h"
#include "op/nn/softmax.h"
#include "op/registry.h"
#include "op/vmath/vmath.h"
#if MX_USE_CUDA
#include "op/cuda/nn_gpu.h"
#endif

namespace mx::op {
namespace {

// ---- SoftmaxOutput ----------------------------------------------------------------

enum class Normalization { kNull, kBatch, kValid };

struct SoftmaxOutputParam : Params<SoftmaxOutputParam> {
  float grad_scale = 1.0f;
  float ignore_label = -1.0f;
  bool multi_output = false;
  bool use_ignore = false;
  bool preserve_shape = false;
  Normalization normalization = Normalization::kNull;
  bool out_grad = false;
  float smooth_alpha = 0.0f;
  static void declare(ParamDecl<SoftmaxOutputParam>& d) {
    d.field("grad_scale", &SoftmaxOutputParam::grad_scale)
        .set_default(1.0f)
        .describe("Scales the gradient.");
    d.field("ignore_label", &SoftmaxOutputParam::ignore_label)
        .set_default(-1.0f)
        .describe("With use_ignore, elements with this label get no gradient.");
    d.field("multi_output", &SoftmaxOutputParam::multi_output)
        .set_default(false)
        .describe("Softmax along axis 1 of (n, k, d1, ...), with labels (n, d1, ...).");
    d.field("use_ignore", &SoftmaxOutputParam::use_ignore)
        .set_default(false)
        .describe("Give no gradient to elements labelled ignore_label.");
    d.field("preserve_shape", &SoftmaxOutputParam::preserve_shape)
        .set_default(false)
        .describe("Softmax along the last axis (else over all axes but the first).");
    d.field("normalization", &SoftmaxOutputParam::normalization)
        .set_default(Normalization::kNull)
        .add_enum("null", Normalization::kNull)
        .add_enum("batch", Normalization::kBatch)
        .add_enum("valid", Normalization::kValid)
        .describe(
            "Divide the gradient by nothing, the batch size or the number of labels "
            "that are not ignore_label.");
    d.field("out_grad", &SoftmaxOutputParam::out_grad)
        .set_default(false)
        .describe("Multiply the gradient by the gradient of the output.");
    d.field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha)
        .set_default(0.0f)
        .describe(
            "Label smoothing: the target is 1 - alpha at the label and "
            "alpha / (k - 1) elsewhere.");
  }
};

// Where the softmax runs: (outer, classes, inner).
SoftmaxLayout output_layout(const SoftmaxOutputParam& p, const Shape& s) {
  if (p.multi_output) return {s[0], s[1], s.prod(2, s.ndim())};
  if (p.preserve_shape) return {s.prod(0, s.ndim() - 1), s[s.ndim() - 1], 1};
  return {s[0], s.prod(1, s.ndim()), 1};
}

void infer_softmax_output(const SoftmaxOutputParam& p, ShapeVector& in, ShapeVector&,
                          ShapeVector& out) {
  Shape& data = in[0];
  Shape& label = in[1];
  assign_shape(data, out[0], "input 'data'");
  assign_shape(out[0], data, "output");
  if (!data.rank_known()) return;
  const int nd = data.ndim();
  if (nd < 1 || (p.multi_output && nd < 2))
    throw ShapeError(str("input 'data' of shape ", data.to_string(), " has too few dimensions"));
  // A label shaped like the data holds probabilities.
  if (label.rank_known() && label.ndim() == nd &&
      !(p.multi_output && label[1] == 1 && data[1] != 1)) {
    assign_shape(label, data, "input 'label'");
    return;
  }
  if (!p.multi_output) {
    std::vector<int64_t> dims(data.begin(), data.end() - 1);
    assign_shape(label, Shape(dims), "input 'label'");
    return;
  }
  // multi_output: labels (n, d1 * d2 ...), (n, d1, d2, ...) or (n, 1, d1, d2, ...).
  int64_t rest = 1;
  for (int i = 2; i < nd && rest >= 0; ++i) rest = data[i] < 0 ? -1 : rest * data[i];
  const Shape flat{data[0], rest};
  std::vector<int64_t> dims{data[0]};
  for (int i = 2; i < nd; ++i) dims.push_back(data[i]);
  const Shape squeezed(dims);
  Shape keep = data;
  keep[1] = 1;
  if (!label.rank_known()) {
    label = flat;
    return;
  }
  for (const Shape& candidate : {flat, squeezed, keep}) {
    if (candidate.ndim() != label.ndim()) continue;
    Shape merged = label;
    try {
      assign_shape(merged, candidate, "input 'label'");
    } catch (const ShapeError&) {
      continue;
    }
    label = merged;
    return;
  }
  throw ShapeError(str("input 'label' has shape ", label.to_string(), " but multi_output expects ",
                       flat.to_string(), " or ", squeezed.to_string()));
}

// The output gradient SoftmaxOutput multiplies by (out_grad=True), else null.
template <typename T>
const T* softmax_output_og(const SoftmaxOutputParam& p, const BackwardCall& c) {
  if (!p.out_grad) return nullptr;
  if (c.out_grads.empty() || c.out_grads[0].data == nullptr)
    throw Error("SoftmaxOutput with out_grad=True needs the gradient of its output");
  return c.out_grads[0].ptr<T>();
}

// The layout of class labels, checked against their number.
SoftmaxLayout class_label_layout(const SoftmaxOutputParam& p, const BackwardCall& c) {
  const SoftmaxLayout l = output_layout(p, c.outputs[0].shape);
  const int64_t labels = c.inputs[1].size();
  // One label per (outer, inner) position; MXNet reads the first outer * inner.
  if (labels < l.outer * l.inner)
    throw Error(str("SoftmaxOutput: ", labels, " labels for ", l.outer * l.inner, " outputs"));
  return l;
}

// The gradient functor for class labels. The normalization divides by a
// count of labels, as MXNet counts them; for 'valid' that count is read
// from *valid_count (where the kernel can read it).
template <typename T>
SoftmaxOutputGrad<T> class_label_grad(const SoftmaxOutputParam& p, const BackwardCall& c,
                                      const int64_t* valid_count) {
  const SoftmaxLayout l = class_label_layout(p, c);
  const int64_t labels = c.inputs[1].size();
  double count = 1.0;
  if (p.normalization == Normalization::kBatch)
    count = p.multi_output ? static_cast<double>(l.outer) : static_cast<double>(labels);
  double scale = p.normalization == Normalization::kValid ? p.grad_scale : p.grad_scale / count;
  if (p.multi_output && p.normalization != Normalization::kValid)
    scale /= static_cast<double>(l.inner);
  const double alpha = p.smooth_alpha;
  return {c.outputs[0].ptr<T>(),
          c.inputs[1].ptr<T>(),
          softmax_output_og<T>(p, c),
          c.in_grads[0].ptr<T>(),
          l,
          class_of(p.ignore_label),
          p.use_ignore,
          alpha,
          l.size > 1 ? alpha / static_cast<double>(l.size - 1) : 0.0,
          scale,
          p.normalization == Normalization::kValid ? valid_count : nullptr,
          c.req[0]};
}

// Runs f(i) for i in [0, n) on the CPU threads.
template <typename F>
void for_each_parallel(int64_t n, const F& f) {
  parallel_for(n, kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) f(i);
  });
}

template <typename T>
void softmax_output_backward(const SoftmaxOutputParam& p, const BackwardCall& c) {
  if (c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)  // labels get no gradient
    std::fill(c.in_grads[1].ptr<T>(), c.in_grads[1].ptr<T>() + c.in_grads[1].size(), T(0));
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& out = c.outputs[0];
  // Labels that are probabilities: (y - label) * grad_scale, nothing else.
  if (c.inputs[1].shape == out.shape) {
    for_each_parallel(
        out.size(),
        SoftmaxOutputProbGrad<T>{out.ptr<T>(), c.inputs[1].ptr<T>(), softmax_output_og<T>(p, c),
                                 c.in_grads[0].ptr<T>(), static_cast<T>(p.grad_scale), req});
    return;
  }
  int64_t valid = 0;
  if (p.normalization == Normalization::kValid)
    valid = ValidLabelCount<T>{c.inputs[1].ptr<T>(), c.inputs[1].size(), class_of(p.ignore_label)}
                .partial(0, 1);
  for_each_parallel(out.size(), class_label_grad<T>(p, c, &valid));
}

#if MX_USE_CUDA
template <typename T>
void softmax_output_backward_gpu(const SoftmaxOutputParam& p, const BackwardCall& c) {
  if (c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd)  // labels get no gradient
    cuda::fill_zero(c.in_grads[1], c.rctx.stream, "SoftmaxOutput");
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& out = c.outputs[0];
  if (c.inputs[1].shape == out.shape) {
    cuda::run_elements(
        out.size(), c.rctx.stream, "SoftmaxOutput",
        SoftmaxOutputProbGrad<T>{out.ptr<T>(), c.inputs[1].ptr<T>(), softmax_output_og<T>(p, c),
                                 c.in_grads[0].ptr<T>(), static_cast<T>(p.grad_scale), req});
    return;
  }
  int64_t* valid = nullptr;
  if (p.normalization == Normalization::kValid) {
    class_label_layout(p, c);  // the label count is checked before any launch
    valid = static_cast<int64_t*>(c.resources.temp_space(sizeof(int64_t)));
    cuda::count_valid_labels(
        ValidLabelCount<T>{c.inputs[1].ptr<T>(), c.inputs[1].size(), class_of(p.ignore_label)},
        valid, c.rctx.stream);
  }
  cuda::run_elements(out.size(), c.rctx.stream, "SoftmaxOutput", class_label_grad<T>(p, c, valid));
}
#endif

// ---- regression outputs ----------------------------------------------------------------

struct RegressionOutputParam : Params<RegressionOutputParam> {
  float grad_scale = 1.0f;
  static void declare(ParamDecl<RegressionOutputParam>& d) {
    d.field("grad_scale", &RegressionOutputParam::grad_scale)
        .set_default(1.0f)
        .describe("Scales the gradient (which is also divided by the outputs per sample).");
  }
};

void infer_regression(const RegressionOutputParam&, ShapeVector& in, ShapeVector&,
                      ShapeVector& out) {
  Shape& data = in[0];
  Shape& label = in[1];
  assign_shape(data, out[0], "input 'data'");
  assign_shape(out[0], data, "output");
  if (!data.is_known()) return;
  if (!label.rank_known()) {
    // (n, 1) outputs take labels (n,).
    label = data.ndim() == 2 && data[1] == 1 ? Shape{data[0]} : data;
    return;
  }
  if (label.is_known() && (label.ndim() == 0 || label[0] != data[0] || label.size() != data.size()))
    throw ShapeError(str("input 'label' has shape ", label.to_string(),
                         " but must hold one label per output of ", data.to_string()));
  if (!label.is_known() && label.ndim() == data.ndim()) assign_shape(label, data, "input 'label'");
}

// On the CPU, or (gpu) on the GPU; `name` names the operator in errors.
template <typename T>
void regression_backward(Regression kind, [[maybe_unused]] const char* name,
                         const RegressionOutputParam& p, const BackwardCall& c,
                         [[maybe_unused]] bool gpu) {
  if (c.req[1] != OpReq::kNull && c.req[1] != OpReq::kAdd) {  // labels get no gradient
#if MX_USE_CUDA
    if (gpu)
      cuda::fill_zero(c.in_grads[1], c.rctx.stream, name);
    else
#endif
      std::fill(c.in_grads[1].ptr<T>(), c.in_grads[1].ptr<T>() + c.in_grads[1].size(), T(0));
  }
  const OpReq req = c.req[0];
  if (req == OpReq::kNull) return;
  const TensorRef& label = c.inputs[1];
  // MXNet divides by the number of outputs per sample.
  const int64_t per_sample =
      label.shape.ndim() > 0 && label.shape[0] > 0 ? label.size() / label.shape[0] : 1;
  const T scale = static_cast<T>(p.grad_scale / static_cast<double>(per_sample));
  const RegressionBackward<T> f{
      kind, scale, c.outputs[0].ptr<T>(), label.ptr<T>(), c.in_grads[0].ptr<T>(), req};
#if MX_USE_CUDA
  if (gpu) {
    cuda::run_elements(c.in_grads[0].size(), c.rctx.stream, name, f);
    return;
  }
#endif
  for_each_parallel(c.in_grads[0].size(), f);
}

void add_regression(OpRegistry& r, const char* name, Regression kind, const char* what) {
  r.add<RegressionOutputParam>(name)
      .amp(AmpClass::kFloat32)
      .describe(what)
      .inputs({"data", "label"})
      .infer_shape(infer_regression)
      .inplace({{0, 0}})
      .loss()
      .backward_uses(true, true)
      .forward_cpu([kind, name](const RegressionOutputParam&, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
          using T = typename decltype(tag)::type;
          const T* x = c.inputs[0].ptr<T>();
          map_index(c.outputs[0].ptr<T>(), c.outputs[0].size(), c.req[0],
                    [=](int64_t i) { return regression_value(kind, x[i]); });
        });
      })
      .backward_cpu([kind, name](const RegressionOutputParam& p, const BackwardCall& c) {
        dispatch_real(c.outputs[0].dtype, name, [&](auto tag) {
          regression_backward<typename decltype(tag)::type>(kind, name, p, c, false);
        });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [kind, name](const RegressionOutputParam&, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   cuda::run_elements(c.outputs[0].size(), c.rctx.stream, name,
                                      RegressionForward<T>{kind, c.inputs[0].ptr<T>(),
                                                           c.outputs[0].ptr<T>(), c.req[0]});
                 });
               })
      .backward(DeviceKind::kGPU,
                [kind, name](const RegressionOutputParam& p, const BackwardCall& c) {
                  dispatch_real(c.outputs[0].dtype, name, [&](auto tag) {
                    regression_backward<typename decltype(tag)::type>(kind, name, p, c, true);
                  });
                })
#endif
      ;
}

}  // namespace

void register_output_ops(OpRegistry& r) {
  r.add<SoftmaxOutputParam>("SoftmaxOutput")
      .amp(AmpClass::kFloat32)
      .alias("Softmax")
      .describe(
          "Softmax in the forward pass; the gradient of cross entropy with the labels in "
          "the backward pass.")
      .inputs({"data", "label"})
      .infer_shape(infer_softmax_output)
      .inplace({{0, 0}})
      .loss()
      .backward_uses(true, true)
      // The GPU kernel counts the valid labels (normalization 'valid') into it.
      .resource(ResourceKind::kTempSpace)
      .forward_cpu([](const SoftmaxOutputParam& p, const ForwardCall& c) {
        dispatch_real(c.inputs[0].dtype, "SoftmaxOutput", [&](auto tag) {
          using T = typename decltype(tag)::type;
          const SoftmaxLayout l = output_layout(p, c.inputs[0].shape);
          if constexpr (std::is_same_v<T, float>)
            if (l.inner == 1 && (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace)) {
              softmax_rows(c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(), l, 1.0);
              return;
            }
          softmax_forward(c.inputs[0].ptr<T>(), c.outputs[0].ptr<T>(), l, 1.0, false, c.req[0]);
        });
      })
      .backward_cpu([](const SoftmaxOutputParam& p, const BackwardCall& c) {
        dispatch_real(c.outputs[0].dtype, "SoftmaxOutput", [&](auto tag) {
          softmax_output_backward<typename decltype(tag)::type>(p, c);
        });
      })
#if MX_USE_CUDA
      .forward(DeviceKind::kGPU,
               [](const SoftmaxOutputParam& p, const ForwardCall& c) {
                 dispatch_real(c.inputs[0].dtype, "SoftmaxOutput", [&](auto tag) {
                   using T = typename decltype(tag)::type;
                   const SoftmaxRowForward<T, T> f{c.inputs[0].ptr<T>(),
                                                   c.outputs[0].ptr<T>(),
                                                   output_layout(p, c.inputs[0].shape),
                                                   1.0,
                                                   false,
                                                   c.req[0],
                                                   {}};
                   cuda::softmax_rows_forward(f, c.rctx.stream, "SoftmaxOutput");
                 });
               })
      .backward(DeviceKind::kGPU,
                [](const SoftmaxOutputParam& p, const BackwardCall& c) {
                  dispatch_real(c.outputs[0].dtype, "SoftmaxOutput", [&](auto tag) {
                    softmax_output_backward_gpu<typename decltype(tag)::type>(p, c);
                  });
                })
#endif
      ;

  add_regression(r, "LinearRegressionOutput", Regression::kLinear,
                 "Identity in the forward pass; the gradient of squared error in the backward "
                 "pass.");
  add_regression(r, "LogisticRegressionOutput", Regression::kLogistic,
                 "Sigmoid in the forward pass; the gradient of logistic loss in the backward "
                 "pass.");
  add_regression(r, "MAERegressionOutput", Regression::kMAE,
                 "Identity in the forward pass; the gradient of absolute error in the backward "
                 "pass.");
}

}  // namespace mx::op
