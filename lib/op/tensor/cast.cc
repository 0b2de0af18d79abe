// Cast: converts the element type (any of mx's seven types to any other),
// each value as kernels::convert_value (shared with the GPU kernel) does.
// The gradient is the output's gradient converted back to the input's type.
#include <cstdint>
#include <type_traits>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/cast_values.h"
#include "op/tensor/tensor_kernels.h"
#include "op/tensor/tensor_util.h"
#if MX_USE_CUDA
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

struct CastParam : Params<CastParam> {
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<CastParam>& d) {
    d.field("dtype", &CastParam::dtype).describe("The element type of the output.");
  }
};

}  // namespace

void cast_values(const TensorRef& src, const TensorRef& dst, OpReq req) {
  if (req == OpReq::kNull) return;
  // float32 <-> bfloat16 (mixed precision's casts, every step): vectorised.
  if (req != OpReq::kAdd && src.dtype == DType::kFloat32 && dst.dtype == DType::kBFloat16) {
    const float* in = src.ptr<float>();
    bf16_t* out = dst.ptr<bf16_t>();
    parallel_for(src.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
      round_block(in + begin, out + begin, end - begin);
    });
    return;
  }
  if (req != OpReq::kAdd && src.dtype == DType::kBFloat16 && dst.dtype == DType::kFloat32) {
    const bf16_t* in = src.ptr<bf16_t>();
    float* out = dst.ptr<float>();
    parallel_for(src.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
      widen_block(in + begin, out + begin, end - begin);
    });
    return;
  }
  dispatch_dtype(src.dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_dtype(dst.dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = src.ptr<From>();
      To* out = dst.ptr<To>();
      parallel_for(src.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          store(out + i, req, kernels::convert_value<To>(in[i]));
      });
    });
  });
}

void register_cast_op(OpRegistry& r) {
  auto cast = r.add<CastParam>("Cast")
                  .amp(AmpClass::kFloat32)
                  .alias("cast")
                  .describe("Converts the elements to another type.")
                  .inputs({"data"})
                  .infer_shape([](const CastParam&, ShapeVector& in, ShapeVector&,
                                  ShapeVector& out) { infer_same_shape(in, out); })
                  .infer_type([](const CastParam& p, DTypeVector&, DTypeVector&, DTypeVector& out) {
                    assign_type(out[0], p.dtype, "output");
                  })
                  .backward_uses(false, false)
                  .forward_cpu([](const CastParam&, const ForwardCall& c) {
                    cast_values(c.inputs[0], c.outputs[0], c.req[0]);
                  })
                  .backward_cpu([](const CastParam&, const BackwardCall& c) {
                    cast_values(c.out_grads[0], c.in_grads[0], c.req[0]);
                  });
#if MX_USE_CUDA
  cast.forward(DeviceKind::kGPU, [](const CastParam&, const ForwardCall& c) {
    cuda::cast_gpu(c.rctx, "Cast", c.inputs[0], c.outputs[0], c.req[0]);
  });
  cast.backward(DeviceKind::kGPU, [](const CastParam&, const BackwardCall& c) {
    cuda::cast_gpu(c.rctx, "Cast", c.out_grads[0], c.in_grads[0], c.req[0]);
  });
#else
  (void)cast;
#endif
}

}  // namespace mx::op
