// QuantizeLinear, ONNX's operator (MXNet 1.x has none that takes a zero
// point): y = saturate(round_half_even(x / scale) + zero_point), per tensor
// or per slice along `axis`, into uint8 or int8 (the zero point's type).
// mx's ONNX import ends a graph whose output is a quantized tensor with it,
// so such a model gives the integers ONNX Runtime gives. It has no gradient,
// as ONNX's and MXNet's quantization operators have none. The per-element
// arithmetic is in quantize_linear_kernels.h, shared with the GPU.
#include "base/strings.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/quantize_linear_kernels.h"
#if MX_USE_CUDA
#include "op/cuda/quantize_linear_gpu.h"
#endif

namespace mx::op {
namespace {

struct QuantizeLinearParam : Params<QuantizeLinearParam> {
  int axis = 1;

  static void declare(ParamDecl<QuantizeLinearParam>& d) {
    d.field("axis", &QuantizeLinearParam::axis)
        .set_default(1)
        .describe("The axis of a per-slice scale and zero point (negative: from the end).");
  }
};

// The slices the scale and zero point apply to: `channels` of `inner`
// elements each (1 channel: per tensor).
struct Slicing {
  int64_t inner = 1, channels = 1;
};

Slicing slicing(const QuantizeLinearParam& p, const Shape& x, int64_t scales) {
  Slicing s;
  if (scales == 1) return s;
  const int axis = p.axis < 0 ? p.axis + x.ndim() : p.axis;
  if (axis < 0 || axis >= x.ndim())
    throw ShapeError(str("axis ", p.axis, " is out of range for ", x.ndim(), "-D input 'data'"));
  s.channels = x[axis];
  s.inner = x.prod(axis + 1, x.ndim());
  return s;
}

void infer_quantize_linear(const QuantizeLinearParam& p, ShapeVector& in, ShapeVector&,
                           ShapeVector& out) {
  assign_shape(out[0], in[0], "output");
  assign_shape(in[0], out[0], "input 'data'");
  assign_shape(in[1], in[2], "input 'scale' (from 'zero_point')");
  assign_shape(in[2], in[1], "input 'zero_point' (from 'scale')");
  if (in[1].rank_known() && in[1].ndim() > 1)
    throw ShapeError(
        str("input 'scale' must be a scalar or 1-D, but has shape ", in[1].to_string()));
  if (!in[0].is_known() || !in[1].is_known()) return;
  const int64_t scales = in[1].size();
  if (scales != 1 && slicing(p, in[0], scales).channels != scales)
    throw ShapeError(str("input 'scale' has ", scales, " values for ", in[0].to_string(),
                         " along axis ", p.axis));
}

void infer_quantize_linear_type(DTypeVector& in, DTypeVector& out) {
  std::optional<DType> f32 = DType::kFloat32;
  assign_type(f32, in[0], "input 'data'");
  in[0] = f32;
  f32 = DType::kFloat32;
  assign_type(f32, in[1], "input 'scale'");
  in[1] = f32;
  assign_type(out[0], in[2], "output (the zero point's type)");
  assign_type(in[2], out[0], "input 'zero_point' (the output's type)");
  if (in[2] && *in[2] != DType::kUint8 && *in[2] != DType::kInt8)
    throw InputError(str("input 'zero_point' must be uint8 or int8, not ", dtype_name(*in[2])));
}

template <typename Q>
void run_cpu(const TensorRef& x, const TensorRef& scale, const TensorRef& zero, const TensorRef& y,
             const Slicing& s, float low, float high) {
  const kernels::QuantizeLinearForward<Q> f{
      x.ptr<float>(), scale.ptr<float>(), zero.ptr<Q>(), y.ptr<Q>(),
      s.inner,        s.channels,         low,           high};
  parallel_elements(y.size(), f);
}

}  // namespace

void register_quantize_linear_ops(OpRegistry& r) {
  // It reads float32 and writes integers: nothing for mixed precision to cast.
  auto op = r.add<QuantizeLinearParam>("QuantizeLinear").amp(AmpClass::kFloat32);
  op.describe(
        "ONNX's QuantizeLinear: saturate(round_half_even(data / scale) + zero_point), per tensor "
        "or per slice along axis, in the zero point's type (uint8 or int8). No gradient.")
      .inputs({"data", "scale", "zero_point"})
      .infer_shape(infer_quantize_linear)
      .infer_type([](const QuantizeLinearParam&, DTypeVector& in, DTypeVector&, DTypeVector& out) {
        infer_quantize_linear_type(in, out);
      })
      .forward_cpu([](const QuantizeLinearParam& p, const ForwardCall& c) {
        if (c.req[0] == OpReq::kNull) return;
        const Slicing s = slicing(p, c.inputs[0].shape, c.inputs[1].size());
        if (c.outputs[0].dtype == DType::kUint8)
          run_cpu<uint8_t>(c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0], s, 0, 255);
        else
          run_cpu<int8_t>(c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0], s, -128, 127);
      });
#if MX_USE_CUDA
  op.forward(DeviceKind::kGPU, [](const QuantizeLinearParam& p, const ForwardCall& c) {
    if (c.req[0] == OpReq::kNull) return;
    const Slicing s = slicing(p, c.inputs[0].shape, c.inputs[1].size());
    cuda::quantize_linear_forward_gpu(c.rctx, c.inputs[0], c.inputs[1], c.inputs[2], c.outputs[0],
                                      s.inner, s.channels);
  });
#endif
}

}  // namespace mx::op
