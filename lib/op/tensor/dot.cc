// Matrix products: dot (MXNet's N-D rule: the last axis of lhs, or its first
// with transpose_a, against the first axis of rhs, or its last with
// transpose_b) and batch_dot (one product per leading index). One GEMM per
// product and per gradient. Under mixed precision (AMP class low_precision)
// they run in bfloat16 on the CPU (oneDNN's matmul) and in float16 or
// bfloat16 on a GPU (cuBLAS), with float32 sums.
#include <type_traits>

#include "base/parallel.h"
#include "op/blas.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/registry.h"
#include "op/tensor/dot_products.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_matmul.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/cublas_gemm.h"
#endif

namespace mx::op {
namespace {

enum class StorageType { kNone, kDefault, kCsr, kRowSparse };

struct DotParam : Params<DotParam> {
  bool transpose_a = false;
  bool transpose_b = false;
  StorageType forward_stype = StorageType::kNone;
  static void declare(ParamDecl<DotParam>& d) {
    d.field("transpose_a", &DotParam::transpose_a)
        .set_default(false)
        .describe("Use the transpose of lhs.");
    d.field("transpose_b", &DotParam::transpose_b)
        .set_default(false)
        .describe("Use the transpose of rhs.");
    d.field("forward_stype", &DotParam::forward_stype)
        .set_default(StorageType::kNone)
        .add_enum("None", StorageType::kNone)
        .add_enum("default", StorageType::kDefault)
        .add_enum("csr", StorageType::kCsr)
        .add_enum("row_sparse", StorageType::kRowSparse)
        .describe("Storage type of the output; mx has dense arrays only (None or default).");
  }
};

void require_dense(const DotParam& p) {
  if (p.forward_stype == StorageType::kCsr || p.forward_stype == StorageType::kRowSparse)
    throw ShapeError("forward_stype: sparse outputs are not supported (mx arrays are dense)");
}

void infer_dot(const DotParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  require_dense(p);
  const Shape& l = in[0];
  const Shape& r = in[1];
  if (!l.rank_known() || !r.rank_known()) return;
  if (l.ndim() == 0 || r.ndim() == 0) throw ShapeError("dot needs inputs of at least 1 dimension");
  auto mismatch = [&] {
    return ShapeError(str("dot shape error: ", l.to_string(), " X ", r.to_string(),
                          " (transpose_a=", p.transpose_a ? "True" : "False",
                          ", transpose_b=", p.transpose_b ? "True" : "False", ")"));
  };
  if (l.ndim() == 1 && r.ndim() == 1) {
    if (p.transpose_a || p.transpose_b) throw ShapeError("dot cannot transpose vectors");
    if (l[0] >= 0 && r[0] >= 0 && l[0] != r[0]) throw mismatch();
    assign_shape(out[0], Shape{1}, "output");
    return;
  }
  // The contracted dims of each side and the dims they leave in the output.
  const int64_t kl = p.transpose_a ? l[0] : l[l.ndim() - 1];
  const int64_t kr = p.transpose_b ? r[r.ndim() - 1] : r[0];
  std::vector<int64_t> dims;
  if (l.ndim() > 1) {
    if (p.transpose_a)
      for (int i = 1; i < l.ndim(); ++i) dims.push_back(l[i]);
    else
      for (int i = 0; i + 1 < l.ndim(); ++i) dims.push_back(l[i]);
  }
  if (r.ndim() > 1) {
    if (p.transpose_b)
      for (int i = 0; i + 1 < r.ndim(); ++i) dims.push_back(r[i]);
    else
      for (int i = 1; i < r.ndim(); ++i) dims.push_back(r[i]);
  }
  if (kl >= 0 && kr >= 0 && kl != kr) throw mismatch();
  assign_shape(out[0], Shape(dims), "output");
}

// The product's matrices from the call's operands.
ProductDims dot_operands(const DotParam& p, const std::vector<TensorRef>& in) {
  return dot_dims(p.transpose_a, p.transpose_b, in[0].shape, in[1].shape);
}
BatchDims batch_operands(const DotParam& p, const std::vector<TensorRef>& in) {
  return batch_dims(p.transpose_a, p.transpose_b, in[0].shape, in[1].shape);
}

template <typename T>
void dot_forward(const DotParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const ProductDims g = dot_operands(p, c.inputs);
  const T beta = c.req[0] == OpReq::kAdd ? T(1) : T(0);
  gemm(p.transpose_a, p.transpose_b, g.m, g.n, g.k, T(1), c.inputs[0].ptr<T>(), g.lda,
       c.inputs[1].ptr<T>(), g.ldb, beta, c.outputs[0].ptr<T>(), g.n);
}

// The gradients of C = op(A) op(B) (all row-major, batch offsets applied).
template <typename T, bool kSerial>
void product_backward(bool ta, bool tb, const ProductDims& g, const T* a, const T* b, const T* dc,
                      T* da, OpReq req_a, T* db, OpReq req_b) {
  const GradProducts ps = grad_products(ta, tb, g, req_a, req_b);
  auto in = [&](Operand o) { return o == Operand::kA ? a : o == Operand::kB ? b : dc; };
  for (int i = 0; i < ps.count; ++i) {
    const GradProduct& p = ps.items[static_cast<size_t>(i)];
    const cuda::RowMajorGemm& m = p.gemm;
    const T beta = p.req == OpReq::kAdd ? T(1) : T(0);
    T* out = p.out == Operand::kDA ? da : db;
    if constexpr (kSerial)
      gemm_serial(m.trans_a, m.trans_b, m.m, m.n, m.k, T(1), in(p.lhs), m.lda, in(p.rhs), m.ldb,
                  beta, out, m.ldc);
    else
      gemm(m.trans_a, m.trans_b, m.m, m.n, m.k, T(1), in(p.lhs), m.lda, in(p.rhs), m.ldb, beta, out,
           m.ldc);
  }
}

template <typename T>
void dot_backward(const DotParam& p, const BackwardCall& c) {
  const ProductDims g = dot_operands(p, c.inputs);
  T* da = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  T* db = c.req[1] == OpReq::kNull ? nullptr : c.in_grads[1].ptr<T>();
  product_backward<T, false>(p.transpose_a, p.transpose_b, g, c.inputs[0].ptr<T>(),
                             c.inputs[1].ptr<T>(), c.out_grads[0].ptr<T>(), da, c.req[0], db,
                             c.req[1]);
}

// ---- batch_dot ----------------------------------------------------------------

void infer_batch_dot(const DotParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  require_dense(p);
  const Shape& l = in[0];
  const Shape& r = in[1];
  if (!l.rank_known() || !r.rank_known()) return;
  auto describe = [&] {
    return str(l.to_string(), " X ", r.to_string(),
               " (transpose_a=", p.transpose_a ? "True" : "False",
               ", transpose_b=", p.transpose_b ? "True" : "False", ")");
  };
  const int nd = l.ndim();
  if (nd < 3 || r.ndim() != nd)
    throw ShapeError("batch_dot needs inputs with the same number (>= 3) of dimensions: " +
                     describe());
  std::vector<int64_t> dims;
  for (int i = 0; i < nd - 2; ++i) {
    if (l[i] >= 0 && r[i] >= 0 && l[i] != r[i])
      throw ShapeError("batch_dot: the leading (batch) dimensions must be equal: " + describe());
    dims.push_back(l[i] >= 0 ? l[i] : r[i]);
  }
  const int64_t m = p.transpose_a ? l[nd - 1] : l[nd - 2];
  const int64_t kl = p.transpose_a ? l[nd - 2] : l[nd - 1];
  const int64_t n = p.transpose_b ? r[nd - 2] : r[nd - 1];
  const int64_t kr = p.transpose_b ? r[nd - 1] : r[nd - 2];
  if (kl >= 0 && kr >= 0 && kl != kr)
    throw ShapeError("batch_dot: the contracted dimensions differ: " + describe());
  dims.push_back(m);
  dims.push_back(n);
  assign_shape(out[0], Shape(dims), "output");
}

// Runs fn(i) for every batch index: in parallel with serial products when
// there are enough of them, else one after another with split products.
template <typename F>
void for_batches(int64_t batch, F&& fn) {
  if (batch >= parallel_threads()) {
    parallel_for(batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) fn(i, std::true_type{});
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) fn(i, std::false_type{});
  }
}

template <typename T>
void batch_dot_forward(const DotParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const BatchDims bg = batch_operands(p, c.inputs);
  const ProductDims& g = bg.g;
  const T beta = c.req[0] == OpReq::kAdd ? T(1) : T(0);
  const T* a = c.inputs[0].ptr<T>();
  const T* b = c.inputs[1].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  for_batches(bg.batch, [&](int64_t i, auto serial) {
    const T* ai = a + i * g.m * g.k;
    const T* bi = b + i * g.k * g.n;
    T* yi = y + i * g.m * g.n;
    if constexpr (decltype(serial)::value)
      gemm_serial(p.transpose_a, p.transpose_b, g.m, g.n, g.k, T(1), ai, g.lda, bi, g.ldb, beta, yi,
                  g.n);
    else
      gemm(p.transpose_a, p.transpose_b, g.m, g.n, g.k, T(1), ai, g.lda, bi, g.ldb, beta, yi, g.n);
  });
}

template <typename T>
void batch_dot_backward(const DotParam& p, const BackwardCall& c) {
  const BatchDims bg = batch_operands(p, c.inputs);
  const ProductDims& g = bg.g;
  const T* a = c.inputs[0].ptr<T>();
  const T* b = c.inputs[1].ptr<T>();
  const T* dc = c.out_grads[0].ptr<T>();
  T* da = c.req[0] == OpReq::kNull ? nullptr : c.in_grads[0].ptr<T>();
  T* db = c.req[1] == OpReq::kNull ? nullptr : c.in_grads[1].ptr<T>();
  const int64_t sa = g.m * g.k, sb = g.k * g.n, sc = g.m * g.n;
  for_batches(bg.batch, [&](int64_t i, auto serial) {
    product_backward<T, decltype(serial)::value>(
        p.transpose_a, p.transpose_b, g, a + i * sa, b + i * sb, dc + i * sc,
        da ? da + i * sa : nullptr, c.req[0], db ? db + i * sb : nullptr, c.req[1]);
  });
}

// ---- batched products: the GPU, and bfloat16 on the CPU -------------------------

// `batch` products C = op(A) op(B), operands one matrix apart, each a call of
// run(gemm, strides, a, b, c, req): cuBLAS's strided batched product, or
// oneDNN's matmul for bfloat16 on the CPU.
template <typename Run>
void products_forward(const DotParam& p, const ProductDims& g, int64_t batch, const ForwardCall& c,
                      Run run) {
  run(forward_product(p.transpose_a, p.transpose_b, g),
      cuda::BatchStrides{batch, batch_stride(g, Operand::kA), batch_stride(g, Operand::kB),
                         batch_stride(g, Operand::kDC)},
      c.inputs[0].data, c.inputs[1].data, c.outputs[0].data, c.req[0]);
}

// Their gradients: each product of grad_products once over the whole batch.
template <typename Run>
void products_backward(const DotParam& p, const ProductDims& g, int64_t batch,
                       const BackwardCall& c, Run run) {
  const GradProducts ps = grad_products(p.transpose_a, p.transpose_b, g, c.req[0], c.req[1]);
  auto data = [&](Operand o) -> const void* {
    return o == Operand::kA   ? c.inputs[0].data
           : o == Operand::kB ? c.inputs[1].data
                              : c.out_grads[0].data;
  };
  for (int i = 0; i < ps.count; ++i) {
    const GradProduct& gp = ps.items[static_cast<size_t>(i)];
    run(gp.gemm,
        cuda::BatchStrides{batch, batch_stride(g, gp.lhs), batch_stride(g, gp.rhs),
                           batch_stride(g, gp.out)},
        data(gp.lhs), data(gp.rhs), (gp.out == Operand::kDA ? c.in_grads[0] : c.in_grads[1]).data,
        gp.req);
  }
}

// oneDNN's matmul for bfloat16 on the CPU, as products_forward's and
// products_backward's `run` (refused without oneDNN: bf16_needs_dnnl).
struct Bf16Matmul {
  const OpResources& res;
  void operator()([[maybe_unused]] const cuda::RowMajorGemm& gemm,
                  [[maybe_unused]] const cuda::BatchStrides& strides,
                  [[maybe_unused]] const void* a, [[maybe_unused]] const void* b,
                  [[maybe_unused]] void* out, [[maybe_unused]] OpReq req) const {
#if MX_USE_DNNL
    dnnl_impl::matmul_bf16(gemm, strides, a, b, out, req, res);
#endif
  }
};

Bf16Matmul bf16_matmul(const char* op, const OpResources& res) {
  if (!dnnl_enabled()) bf16_needs_dnnl(op);
  return {res};
}

// Each output element: one multiply-add per element of lhs's last axis.
double dot_flops(const DotParam&, const ShapeVector& in, const ShapeVector& out) {
  return 2.0 * known_elements(out[0]) * static_cast<double>(in[0][in[0].ndim() - 1]);
}

#if MX_USE_CUDA
// The products on the GPU through cuBLAS, in T (float16 and bfloat16 sum in float32).
template <typename T>
auto cublas_products(const char* op, const RunContext& rctx) {
  return [op, &rctx](const cuda::RowMajorGemm& gemm, const cuda::BatchStrides& strides,
                     const void* a, const void* b, void* out, OpReq req) {
    cuda::gemm(rctx, op, gemm, static_cast<const T*>(a), static_cast<const T*>(b),
               static_cast<T*>(out), req, strides);
  };
}
#endif

}  // namespace

void register_dot_ops(OpRegistry& r) {
  auto dot =
      r.add<DotParam>("dot")
          .amp(AmpClass::kLowPrecision)
          .describe(
              "Matrix product; N-D inputs contract the last axis of lhs with the first of rhs.")
          .inputs({"lhs", "rhs"})
          .infer_shape(infer_dot)
          .backward_uses(true, false)
          .flops(dot_flops)
          .forward_cpu([](const DotParam& p, const ForwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16)
              return products_forward(p, dot_operands(p, c.inputs), 1, c,
                                      bf16_matmul("dot", c.resources));
            dispatch_real(c.inputs[0].dtype, "dot",
                          [&](auto tag) { dot_forward<typename decltype(tag)::type>(p, c); });
          })
          .backward_cpu([](const DotParam& p, const BackwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16)
              return products_backward(p, dot_operands(p, c.inputs), 1, c,
                                       bf16_matmul("dot", c.resources));
            dispatch_real(c.inputs[0].dtype, "dot",
                          [&](auto tag) { dot_backward<typename decltype(tag)::type>(p, c); });
          });

  auto batch_dot =
      r.add<DotParam>("batch_dot")
          .amp(AmpClass::kLowPrecision)
          .describe("Matrix products of the last two axes, one per index of the leading axes.")
          .inputs({"lhs", "rhs"})
          .infer_shape(infer_batch_dot)
          .backward_uses(true, false)
          .flops(dot_flops)
          .forward_cpu([](const DotParam& p, const ForwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16) {
              const BatchDims bg = batch_operands(p, c.inputs);
              return products_forward(p, bg.g, bg.batch, c, bf16_matmul("batch_dot", c.resources));
            }
            dispatch_real(c.inputs[0].dtype, "batch_dot",
                          [&](auto tag) { batch_dot_forward<typename decltype(tag)::type>(p, c); });
          })
          .backward_cpu([](const DotParam& p, const BackwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16) {
              const BatchDims bg = batch_operands(p, c.inputs);
              return products_backward(p, bg.g, bg.batch, c, bf16_matmul("batch_dot", c.resources));
            }
            dispatch_real(c.inputs[0].dtype, "batch_dot", [&](auto tag) {
              batch_dot_backward<typename decltype(tag)::type>(p, c);
            });
          });

#if MX_USE_CUDA
  dot.forward(DeviceKind::kGPU, [](const DotParam& p, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, "dot", [&](auto tag) {
      products_forward(p, dot_operands(p, c.inputs), 1, c,
                       cublas_products<typename decltype(tag)::type>("dot", c.rctx));
    });
  });
  dot.backward(DeviceKind::kGPU, [](const DotParam& p, const BackwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, "dot", [&](auto tag) {
      products_backward(p, dot_operands(p, c.inputs), 1, c,
                        cublas_products<typename decltype(tag)::type>("dot", c.rctx));
    });
  });
  batch_dot.forward(DeviceKind::kGPU, [](const DotParam& p, const ForwardCall& c) {
    const BatchDims bg = batch_operands(p, c.inputs);
    dispatch_real_amp(c.inputs[0].dtype, "batch_dot", [&](auto tag) {
      products_forward(p, bg.g, bg.batch, c,
                       cublas_products<typename decltype(tag)::type>("batch_dot", c.rctx));
    });
  });
  batch_dot.backward(DeviceKind::kGPU, [](const DotParam& p, const BackwardCall& c) {
    const BatchDims bg = batch_operands(p, c.inputs);
    dispatch_real_amp(c.inputs[0].dtype, "batch_dot", [&](auto tag) {
      products_backward(p, bg.g, bg.batch, c,
                        cublas_products<typename decltype(tag)::type>("batch_dot", c.rctx));
    });
  });
#else
  (void)dot, (void)batch_dot;
#endif
}

}  // namespace mx::op
