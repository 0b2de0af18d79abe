// one_hot: indices to one-hot vectors along a new last axis. Indices may be of
// any type (floating ones are truncated, as in MXNet); those outside
// [0, depth) give a row of off_value. MXNet defines no gradient for it.
#include <cstdint>

#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/tensor_util.h"
#if MX_USE_CUDA
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
  if constexpr (std::is_same_v<T, half_t>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

template <typename I>
double as_double(I v) {
  if constexpr (std::is_same_v<I, half_t>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  auto one_hot =
      r.add<OneHotParam>("one_hot")
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

}  // namespace mx::op
