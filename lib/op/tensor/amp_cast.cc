// MXNet's mixed-precision casts, which the AMP graph pass (graph/amp_pass.h)
// inserts and MXNet 1.9.1 reads back:
// - amp_cast(data, dtype): float32, float16 and bfloat16 data becomes
//   `dtype`; any other type passes through unchanged.
// - amp_multicast(data_0, ..., num_outputs, cast_narrow): every float input
//   becomes the widest float type among them (the narrowest with
//   cast_narrow), as MXNet's AMPMultiCastType decides it.
// Both gradients are the output's gradient converted back to the input's type.
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/cast_values.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

struct AmpCastParam : Params<AmpCastParam> {
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<AmpCastParam>& d) {
    d.field("dtype", &AmpCastParam::dtype)
        .describe("The element type float inputs become (others pass through).");
  }
};

struct AmpMultiCastParam : Params<AmpMultiCastParam> {
  int num_outputs = 1;
  bool cast_narrow = false;
  static void declare(ParamDecl<AmpMultiCastParam>& d) {
    d.field("num_outputs", &AmpMultiCastParam::num_outputs)
        .set_lower_bound(1)
        .describe("The number of inputs (and outputs).");
    d.field("cast_narrow", &AmpMultiCastParam::cast_narrow)
        .set_default(false)
        .describe("Cast to the narrowest float type of the inputs instead of the widest.");
  }
};

// The types amp_cast and amp_multicast convert; others pass through.
bool amp_float(std::optional<DType> t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
}

void amp_cast_type(const AmpCastParam& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  if (!in[0]) return;
  assign_type(out[0], amp_float(in[0]) ? p.dtype : *in[0], "output");
}

// MXNet's AMPMultiCastType: the widest float type of the inputs (float32 as
// soon as one is; else input 0's), or with cast_narrow the narrowest
// (float16, then bfloat16, else float32).
void amp_multicast_type(const AmpMultiCastParam& p, DTypeVector& in, DTypeVector&,
                        DTypeVector& out) {
  for (const auto& t : in)
    if (!t) return;
  DType target = p.cast_narrow ? DType::kFloat32 : *in[0];
  for (size_t i = 0; i < in.size(); ++i) {
    if (!p.cast_narrow && (in[i] == DType::kFloat32 || out[i] == DType::kFloat32))
      target = DType::kFloat32;
    else if (p.cast_narrow && (in[i] == DType::kFloat16 || out[i] == DType::kFloat16))
      target = DType::kFloat16;
    else if (p.cast_narrow && (in[i] == DType::kBFloat16 || out[i] == DType::kBFloat16))
      target = DType::kBFloat16;
  }
  for (size_t i = 0; i < in.size(); ++i)
    assign_type(out[i], amp_float(in[i]) ? target : *in[i], str("output ", i));
}

// Each input i converted into output i (forward), or each output gradient
// back into input gradient i (backward).
void cast_each(const std::vector<TensorRef>& from, const std::vector<TensorRef>& to,
               const std::vector<OpReq>& req, [[maybe_unused]] DeviceKind device,
               [[maybe_unused]] const RunContext& rctx) {
  for (size_t i = 0; i < to.size(); ++i) {
    if (req[i] == OpReq::kNull) continue;
#if MX_USE_CUDA
    if (device == DeviceKind::kGPU) {
      cuda::cast_gpu(rctx, "amp_cast", from[i], to[i], req[i]);
      continue;
    }
#endif
    cast_values(from[i], to[i], req[i]);
  }
}

template <typename P>
void add_kernels(OpBuilder<P> b) {
  for (DeviceKind device : {DeviceKind::kCPU, DeviceKind::kGPU}) {
#if !MX_USE_CUDA
    if (device == DeviceKind::kGPU) continue;
#endif
    b.forward(device, [device](const P&, const ForwardCall& c) {
      cast_each(c.inputs, c.outputs, c.req, device, c.rctx);
    });
    b.backward(device, [device](const P&, const BackwardCall& c) {
      cast_each(c.out_grads, c.in_grads, c.req, device, c.rctx);
    });
  }
}

}  // namespace

void register_amp_cast_ops(OpRegistry& r) {
  add_kernels(r.add<AmpCastParam>("amp_cast")
                  .amp(AmpClass::kFollow)  // the pass's own casts: never cast again
                  .describe("Casts float32/float16/bfloat16 data to dtype for mixed precision; "
                            "other types pass through.")
                  .inputs({"data"})
                  .infer_shape([](const AmpCastParam&, ShapeVector& in, ShapeVector&,
                                  ShapeVector& out) { infer_same_shape(in, out); })
                  .infer_type(amp_cast_type)
                  .backward_uses(false, false));
  add_kernels(r.add<AmpMultiCastParam>("amp_multicast")
                  .amp(AmpClass::kFollow)
                  .describe("Casts float inputs to the widest (cast_narrow: the narrowest) "
                            "float type among them, for mixed precision.")
                  .inputs([](const AmpMultiCastParam& p) {
                    std::vector<std::string> names;
                    for (int i = 0; i < p.num_outputs; ++i) names.push_back(str("data_", i));
                    return names;
                  })
                  .outputs([](const AmpMultiCastParam& p) {
                    std::vector<std::string> names;
                    for (int i = 0; i < p.num_outputs; ++i) names.push_back(str("output", i));
                    return names;
                  })
                  .infer_shape([](const AmpMultiCastParam&, ShapeVector& in, ShapeVector&,
                                  ShapeVector& out) {
                    for (size_t i = 0; i < in.size(); ++i) {
                      assign_shape(out[i], in[i], str("output ", i));
                      assign_shape(in[i], out[i], str("input ", i));
                    }
                  })
                  .infer_type(amp_multicast_type)
                  .backward_uses(false, false));
}

}  // namespace mx::op
