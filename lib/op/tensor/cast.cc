// Cast: converts the element type (any of mx's seven types to any other).
// The gradient is the output's gradient converted back to the input's type.
#include <cstdint>
#include <type_traits>

#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/tensor_util.h"

namespace mx::op {
namespace {

struct CastParam : Params<CastParam> {
  DType dtype = DType::kFloat32;
  static void declare(ParamDecl<CastParam>& d) {
    d.field("dtype", &CastParam::dtype).describe("The element type of the output.");
  }
};

// One value converted as MXNet's static_cast does on x86: floating values
// bound for an integer type go through int64, so that out-of-range values
// wrap (-1.7 -> 255 as uint8) instead of being undefined.
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_same_v<From, half_t>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, half_t>) {
    return half_t(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!(v > From(-9.2e18) && v < From(9.2e18))) return To(0);  // NaN, inf, out of int64
    return static_cast<To>(static_cast<int64_t>(v));
  } else {
    return static_cast<To>(v);
  }
}

void cast_values(const TensorRef& src, const TensorRef& dst, OpReq req) {
  if (req == OpReq::kNull) return;
  dispatch_dtype(src.dtype, [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    dispatch_dtype(dst.dtype, [&](auto to_tag) {
      using To = typename decltype(to_tag)::type;
      const From* in = src.ptr<From>();
      To* out = dst.ptr<To>();
      parallel_for(src.size(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) store(out + i, req, convert<To>(in[i]));
      });
    });
  });
}

}  // namespace

void register_cast_op(OpRegistry& r) {
  r.add<CastParam>("Cast")
      .alias("cast")
      .describe("Converts the elements to another type.")
      .inputs({"data"})
      .infer_shape([](const CastParam&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
        infer_same_shape(in, out);
      })
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
}

}  // namespace mx::op
