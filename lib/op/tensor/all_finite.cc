// all_finite and multi_all_finite (MXNet's contrib operators for mixed
// precision): a float32 (1,) output that is 1 when every value of the
// inputs is finite and 0 otherwise. mx-train's dynamic loss scale checks a
// step's gradients with one multi_all_finite per device (train/scaled_gradients.h)
// instead of a reduction per gradient. As in MXNet, init_output=False leaves
// the output's prior value where every value is finite, and the operators
// have no gradient.
#include <atomic>

#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/registry.h"
#include "op/tensor/all_finite_kernels.h"
#if MX_USE_CUDA
#include "op/cuda/all_finite_gpu.h"
#endif

namespace mx::op {
namespace {

struct AllFiniteParam : Params<AllFiniteParam> {
  bool init_output = true;
  static void declare(ParamDecl<AllFiniteParam>& d) {
    d.field("init_output", &AllFiniteParam::init_output)
        .set_default(true)
        .describe("Initialize output to 1.");
  }
};

struct MultiAllFiniteParam : Params<MultiAllFiniteParam> {
  int num_arrays = 1;
  bool init_output = true;
  static void declare(ParamDecl<MultiAllFiniteParam>& d) {
    d.field("num_arrays", &MultiAllFiniteParam::num_arrays)
        .set_default(1)
        .set_lower_bound(1)
        .describe("Number of arrays.");
    d.field("init_output", &MultiAllFiniteParam::init_output)
        .set_default(true)
        .describe("Initialize output to 1.");
  }
};

void infer_flag_shape(ShapeVector&, ShapeVector& out) { assign_shape(out[0], Shape{1}, "output"); }

void infer_flag_type(DTypeVector& in, DTypeVector& out) {
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] && !is_floating(*in[i]))
      throw InputError(str("input ", i, " is ", dtype_name(*in[i]),
                           "; the inputs are float16, bfloat16, float32 or float64"));
  assign_type(out[0], DType::kFloat32, "output");
}

// Whether every one of the n values at x is finite: the threads' parts
// without an early exit, so that each part's loop vectorizes (a step's
// gradients, every step of a loss-scaled run).
template <typename T>
bool all_finite(const T* x, int64_t n) {
  std::atomic<bool> finite{true};
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    bool part = true;
    for (int64_t i = begin; i < end; ++i) part &= kernels::finite_value(x[i]);
    if (!part) finite.store(false, std::memory_order_relaxed);
  });
  return finite.load();
}

void forward_cpu(bool init_output, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  float* flag = c.outputs[0].ptr<float>();
  if (init_output) *flag = 1.0f;
  for (const TensorRef& x : c.inputs)
    dispatch_dtype(x.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (kernels::kFloatStorage<T>) {
        if (!all_finite(x.ptr<T>(), x.size())) *flag = 0.0f;
      }
    });
}

template <typename P>
void add_kernels(OpBuilder<P> op) {
  op.forward_cpu([](const P& p, const ForwardCall& c) { forward_cpu(p.init_output, c); });
#if MX_USE_CUDA
  op.forward(DeviceKind::kGPU, [](const P& p, const ForwardCall& c) {
    if (c.req[0] != OpReq::kNull)
      cuda::all_finite_gpu(c.rctx, c.inputs, c.outputs[0], p.init_output);
  });
#endif
}

}  // namespace

void register_all_finite_ops(OpRegistry& r) {
  // Its inputs' own types (float32 gradients in mx-train): never cast.
  add_kernels(r.add<AllFiniteParam>("all_finite")
                  .amp(AmpClass::kFollow)
                  .describe("1 when every value of data is finite, else 0 (float32, shape (1,)); "
                            "for mixed precision.")
                  .inputs({"data"})
                  .infer_shape([](const AllFiniteParam&, ShapeVector& in, ShapeVector&,
                                  ShapeVector& out) { infer_flag_shape(in, out); })
                  .infer_type([](const AllFiniteParam&, DTypeVector& in, DTypeVector&,
                                 DTypeVector& out) { infer_flag_type(in, out); }));
  add_kernels(r.add<MultiAllFiniteParam>("multi_all_finite")
                  .amp(AmpClass::kFollow)
                  .describe("1 when every value of all num_arrays inputs is finite, else 0 "
                            "(float32, shape (1,)); one check of a step's gradients.")
                  .inputs([](const MultiAllFiniteParam& p) {
                    std::vector<std::string> names;
                    for (int i = 0; i < p.num_arrays; ++i) names.push_back(str("data_", i));
                    return names;
                  })
                  .infer_shape([](const MultiAllFiniteParam&, ShapeVector& in, ShapeVector&,
                                  ShapeVector& out) { infer_flag_shape(in, out); })
                  .infer_type([](const MultiAllFiniteParam&, DTypeVector& in, DTypeVector&,
                                 DTypeVector& out) { infer_flag_type(in, out); }));
}

}  // namespace mx::op
