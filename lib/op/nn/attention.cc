// MXNet 1.9.1's multi-head attention helpers (src/operator/contrib/
// transformer.cc): the interleaved matrix products of self-attention and
// encoder-decoder attention, and _contrib_div_sqrt_dim.
//
// Layouts (T queries, S keys, N sequences, d = head size):
//   _contrib_interleaved_matmul_selfatt_qk(queries_keys_values (T, N, heads*3*d))
//       -> (N*heads, T, T) = Q K^T / sqrt(d), batch n*heads + h
//   _contrib_interleaved_matmul_selfatt_valatt(queries_keys_values, attention (N*heads, T, T))
//       -> (T, N, heads*d) = attention V
//   _contrib_interleaved_matmul_encdec_qk(queries (T, N, heads*d), keys_values (S, N, heads*2*d))
//       -> (N*heads, T, S) = Q K^T / sqrt(d)
//   _contrib_interleaved_matmul_encdec_valatt(keys_values, attention (N*heads, T, S))
//       -> (T, N, heads*d) = attention V
// with each head's query, key and value vectors side by side (reshape
// (T, N, heads, 3, d)). Every product is a strided batch of matrix products
// (attention_products.h): OpenBLAS per batch on the CPU, one cuBLAS
// strided-batched call per product on the GPU.
#include <algorithm>
#include <cmath>

#include "base/parallel.h"
#include "op/blas.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/attention_kernels.h"
#include "op/nn/attention_products.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/cublas_gemm.h"
#include "op/cuda/sequence_gpu.h"
#endif

namespace mx::op {
namespace {

struct InterleavedMatMulParam : Params<InterleavedMatMulParam> {
  int heads = 1;
  static void declare(ParamDecl<InterleavedMatMulParam>& d) {
    d.field("heads", &InterleavedMatMulParam::heads)
        .set_lower_bound(1)
        .describe("The number of attention heads.");
  }
};

// ---- shape inference ----------------------------------------------------------

// a * b and a / b where both are known (-1 otherwise); a quotient that is
// not whole is an error naming `what`.
int64_t times(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }
int64_t over(int64_t a, int64_t b, const std::string& what) {
  if (a < 0) return -1;
  if (a % b != 0) throw ShapeError(str(what, ": ", a, " is not a multiple of ", b));
  return a / b;
}
// The first known of a and b.
int64_t either(int64_t a, int64_t b) { return a >= 0 ? a : b; }

// A 3-D shape with unknown dimensions where the rank is unknown.
Shape& as_3d(Shape& s, const std::string& what) {
  require_ndim(s, 3, what);
  if (!s.rank_known()) s = Shape::filled(3, -1);
  return s;
}

// The last axis of a projection input: heads * vectors * d with d >= 1.
void check_projection(const Shape& s, const std::string& what, int64_t vectors, int64_t heads) {
  if (s[2] < 0) return;
  const int64_t unit = vectors * heads;
  if (s[2] == 0 || s[2] % unit != 0)
    throw ShapeError(str(what, " ", s.to_string(), ": its last axis (", s[2],
                         ") must be a positive multiple of ",
                         vectors > 1 ? str(vectors, " * ") : "", "heads = ", unit));
}

// Shapes of the three arrays of one operator, filled from each other.
struct AttentionShapes {
  Shape& a;  // input 0
  Shape& b;  // input 1
  Shape& out;
};

void infer_self_qk(int64_t h, Shape& qkv, Shape& out) {
  const std::string q_name = "input 'queries_keys_values'";
  as_3d(qkv, q_name);
  as_3d(out, "output");
  for (int round = 0; round < 2; ++round) {
    assign_shape(
        qkv, Shape{either(out[1], out[2]), over(out[0], h, "output's first axis (N*heads)"), -1},
        q_name);
    check_projection(qkv, q_name, 3, h);
    assign_shape(out, Shape{times(qkv[1], h), qkv[0], qkv[0]}, "output");
  }
}

void infer_self_valatt(int64_t h, const AttentionShapes& s) {
  const std::string q_name = "input 'queries_keys_values'", att_name = "input 'attention'";
  as_3d(s.a, q_name);
  as_3d(s.b, att_name);
  as_3d(s.out, "output");
  for (int round = 0; round < 2; ++round) {
    const int64_t t = either(s.a[0], either(s.b[1], either(s.b[2], s.out[0])));
    const int64_t n =
        either(s.a[1], either(s.out[1], over(s.b[0], h, "attention's first axis (N*heads)")));
    assign_shape(s.a, Shape{t, n, times(s.out[2], 3)}, q_name);
    check_projection(s.a, q_name, 3, h);
    assign_shape(s.b, Shape{times(n, h), t, t}, att_name);
    assign_shape(s.out, Shape{t, n, s.a[2] < 0 ? -1 : s.a[2] / 3}, "output");
  }
}

void infer_encdec_qk(int64_t h, const AttentionShapes& s) {
  const std::string q_name = "input 'queries'", kv_name = "input 'keys_values'";
  as_3d(s.a, q_name);
  as_3d(s.b, kv_name);
  as_3d(s.out, "output");
  if (s.a[2] >= 0 && s.b[2] >= 0 && s.b[2] != 2 * s.a[2])
    throw ShapeError(str(kv_name, " ", s.b.to_string(), ": its last axis must be twice that of ",
                         q_name, " ", s.a.to_string()));
  for (int round = 0; round < 2; ++round) {
    const int64_t n =
        either(s.a[1], either(s.b[1], over(s.out[0], h, "output's first axis (N*heads)")));
    assign_shape(s.a, Shape{s.out[1], n, s.b[2] < 0 ? -1 : s.b[2] / 2}, q_name);
    check_projection(s.a, q_name, 1, h);
    assign_shape(s.b, Shape{s.out[2], n, times(s.a[2], 2)}, kv_name);
    check_projection(s.b, kv_name, 2, h);
    assign_shape(s.out, Shape{times(n, h), s.a[0], s.b[0]}, "output");
  }
}

void infer_encdec_valatt(int64_t h, const AttentionShapes& s) {
  const std::string kv_name = "input 'keys_values'", att_name = "input 'attention'";
  as_3d(s.a, kv_name);
  as_3d(s.b, att_name);
  as_3d(s.out, "output");
  for (int round = 0; round < 2; ++round) {
    const int64_t n =
        either(s.a[1], either(s.out[1], over(s.b[0], h, "attention's first axis (N*heads)")));
    assign_shape(s.a, Shape{s.b[2], n, times(s.out[2], 2)}, kv_name);
    check_projection(s.a, kv_name, 2, h);
    assign_shape(s.b, Shape{times(n, h), s.out[0], s.a[0]}, att_name);
    assign_shape(s.out, Shape{s.b[1], n, s.a[2] < 0 ? -1 : s.a[2] / 2}, "output");
  }
}

// ---- kernels ------------------------------------------------------------------

template <typename T>
struct AttentionArrays {
  const T* in[2] = {nullptr, nullptr};
  const T* out_grad = nullptr;
  T* out = nullptr;  // the forward output, or one of the gradients
  T* grad[2] = {nullptr, nullptr};

  const T* read(AttentionArray a) const {
    switch (a) {
      case AttentionArray::kIn0: return in[0];
      case AttentionArray::kIn1: return in[1];
      case AttentionArray::kOutGrad: return out_grad;
      default: return nullptr;
    }
  }
  T* write(AttentionArray a) const {
    return a == AttentionArray::kOut ? out : grad[a == AttentionArray::kGrad1 ? 1 : 0];
  }
};

// One product on the CPU: in parallel over the batch with serial GEMMs
// when there are enough batches, else one split GEMM after another.
template <typename T>
void run_product(const AttentionProduct& p, const AttentionArrays<T>& arrays, OpReq req) {
  if (req == OpReq::kNull) return;
  const T* a = arrays.read(p.a.array) + p.a.offset;
  const T* b = arrays.read(p.b.array) + p.b.offset;
  T* c = arrays.write(p.c.array) + p.c.offset;
  const cuda::RowMajorGemm& g = p.gemm;
  const T alpha = static_cast<T>(p.alpha), beta = req == OpReq::kAdd ? T(1) : T(0);
  const int64_t batch = p.strides.batch;
  auto one = [&](int64_t i, bool serial) {
    const T* ai = a + i * p.strides.a;
    const T* bi = b + i * p.strides.b;
    T* ci = c + i * p.strides.c;
    if (serial)
      gemm_serial(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, ai, g.lda, bi, g.ldb, beta, ci,
                  g.ldc);
    else
      gemm(g.trans_a, g.trans_b, g.m, g.n, g.k, alpha, ai, g.lda, bi, g.ldb, beta, ci, g.ldc);
  };
  if (batch >= parallel_threads()) {
    parallel_for(batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t i = b0; i < b1; ++i) one(i, true);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i, false);
  }
}

template <typename T>
void zero_slots_cpu(const AttentionZeroSlots& z, T* grad) {
  parallel_for(z.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(z.width, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   T* row = grad + r * z.pitch + z.offset;
                   std::fill(row, row + z.width, T(0));
                 }
               });
}

template <typename T>
AttentionArrays<T> forward_arrays(const ForwardCall& c) {
  AttentionArrays<T> arrays;
  for (size_t i = 0; i < c.inputs.size() && i < 2; ++i) arrays.in[i] = c.inputs[i].ptr<T>();
  arrays.out = c.outputs[0].ptr<T>();
  return arrays;
}

template <typename T>
AttentionArrays<T> backward_arrays(const BackwardCall& c) {
  AttentionArrays<T> arrays;
  for (size_t i = 0; i < c.inputs.size() && i < 2; ++i) {
    arrays.in[i] = c.inputs[i].ptr<T>();
    // Gradients that are not requested may be absent arrays.
    if (c.req[i] != OpReq::kNull) arrays.grad[i] = c.in_grads[i].ptr<T>();
  }
  arrays.out_grad = c.out_grads[0].ptr<T>();
  return arrays;
}

AttentionDims dims_of(AttentionKind kind, int heads, const std::vector<TensorRef>& inputs) {
  return attention_dims(kind, heads, inputs[0].shape,
                        inputs.size() > 1 ? inputs[1].shape : inputs[0].shape);
}

OpReq backward_req(const BackwardCall& c, int i) {
  return static_cast<size_t>(i) < c.req.size() ? c.req[static_cast<size_t>(i)] : OpReq::kNull;
}

template <typename T>
void attention_forward_cpu(AttentionKind kind, const InterleavedMatMulParam& p,
                           const ForwardCall& c) {
  const AttentionPlan plan = attention_forward_plan(kind, dims_of(kind, p.heads, c.inputs));
  const AttentionArrays<T> arrays = forward_arrays<T>(c);
  for (int i = 0; i < plan.count; ++i)
    run_product(plan.products[static_cast<size_t>(i)], arrays, c.req[0]);
}

template <typename T>
void attention_backward_cpu(AttentionKind kind, const InterleavedMatMulParam& p,
                            const BackwardCall& c) {
  const AttentionPlan plan = attention_backward_plan(kind, dims_of(kind, p.heads, c.inputs),
                                                     backward_req(c, 0), backward_req(c, 1));
  const AttentionArrays<T> arrays = backward_arrays<T>(c);
  if (plan.zero) zero_slots_cpu(plan.zero_slots, arrays.grad[plan.zero_slots.grad]);
  for (int i = 0; i < plan.count; ++i) {
    const AttentionProduct& product = plan.products[static_cast<size_t>(i)];
    run_product(product, arrays, c.req[static_cast<size_t>(product.req)]);
  }
}

#if MX_USE_CUDA
template <typename T>
void run_product_gpu(const RunContext& rctx, const char* name, const AttentionProduct& p,
                     const AttentionArrays<T>& arrays, OpReq req) {
  cuda::gemm(rctx, name, p.gemm, arrays.read(p.a.array) + p.a.offset,
             arrays.read(p.b.array) + p.b.offset, arrays.write(p.c.array) + p.c.offset, req,
             p.strides, p.alpha);
}

template <typename T>
void attention_forward_gpu(AttentionKind kind, const char* name, const InterleavedMatMulParam& p,
                           const ForwardCall& c) {
  const AttentionPlan plan = attention_forward_plan(kind, dims_of(kind, p.heads, c.inputs));
  const AttentionArrays<T> arrays = forward_arrays<T>(c);
  for (int i = 0; i < plan.count; ++i)
    run_product_gpu(c.rctx, name, plan.products[static_cast<size_t>(i)], arrays, c.req[0]);
}

template <typename T>
void attention_backward_gpu(AttentionKind kind, const char* name, const InterleavedMatMulParam& p,
                            const BackwardCall& c) {
  const AttentionPlan plan = attention_backward_plan(kind, dims_of(kind, p.heads, c.inputs),
                                                     backward_req(c, 0), backward_req(c, 1));
  const AttentionArrays<T> arrays = backward_arrays<T>(c);
  if (plan.zero) {
    const AttentionZeroSlots& z = plan.zero_slots;
    cuda::zero_columns(c.in_grads[static_cast<size_t>(z.grad)], z.rows, z.pitch, z.offset, z.width,
                       c.rctx.stream, name);
  }
  for (int i = 0; i < plan.count; ++i) {
    const AttentionProduct& product = plan.products[static_cast<size_t>(i)];
    run_product_gpu(c.rctx, name, product, arrays, c.req[static_cast<size_t>(product.req)]);
  }
}
#endif

// Two multiply-adds per element of every product's output and its inner size.
double attention_flops(AttentionKind kind, int heads, const ShapeVector& in) {
  for (const Shape& s : in)
    if (!s.is_known()) return 0.0;
  const AttentionDims d = attention_dims(kind, heads, in[0], in.size() > 1 ? in[1] : in[0]);
  return 2.0 * static_cast<double>(d.products()) * static_cast<double>(d.q_len) *
         static_cast<double>(d.kv_len) * static_cast<double>(d.head_dim);
}

void add_interleaved(OpRegistry& r, const char* name, AttentionKind kind,
                     std::vector<std::string> inputs, const char* what) {
  auto op = r.add<InterleavedMatMulParam>(name)
                .amp(AmpClass::kFloat32)
                .describe(what)
                .inputs(inputs)
                .infer_shape([kind](const InterleavedMatMulParam& p, ShapeVector& in, ShapeVector&,
                                    ShapeVector& out) {
                  const int64_t h = p.heads;
                  switch (kind) {
                    case AttentionKind::kSelfQK: infer_self_qk(h, in[0], out[0]); break;
                    case AttentionKind::kSelfValAtt:
                      infer_self_valatt(h, {in[0], in[1], out[0]});
                      break;
                    case AttentionKind::kEncDecQK:
                      infer_encdec_qk(h, {in[0], in[1], out[0]});
                      break;
                    case AttentionKind::kEncDecValAtt:
                      infer_encdec_valatt(h, {in[0], in[1], out[0]});
                      break;
                  }
                })
                .backward_uses(true, false)
                .expensive()
                .flops([kind](const InterleavedMatMulParam& p, const ShapeVector& in,
                              const ShapeVector&) { return attention_flops(kind, p.heads, in); })
                .forward_cpu([kind, name](const InterleavedMatMulParam& p, const ForwardCall& c) {
                  dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
                    attention_forward_cpu<typename decltype(tag)::type>(kind, p, c);
                  });
                })
                .backward_cpu([kind, name](const InterleavedMatMulParam& p, const BackwardCall& c) {
                  dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
                    attention_backward_cpu<typename decltype(tag)::type>(kind, p, c);
                  });
                });
#if MX_USE_CUDA
  op.forward(DeviceKind::kGPU, [kind, name](const InterleavedMatMulParam& p, const ForwardCall& c) {
    dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
      attention_forward_gpu<typename decltype(tag)::type>(kind, name, p, c);
    });
  });
  op.backward(DeviceKind::kGPU,
              [kind, name](const InterleavedMatMulParam& p, const BackwardCall& c) {
                dispatch_real(c.inputs[0].dtype, name, [&](auto tag) {
                  attention_backward_gpu<typename decltype(tag)::type>(kind, name, p, c);
                });
              });
#else
  (void)op;
#endif
}

// ---- _contrib_div_sqrt_dim --------------------------------------------------------

// 1/sqrt(the last axis' length) in T.
template <typename T>
T div_sqrt_dim_scale(const Shape& s) {
  return static_cast<T>(1.0 / std::sqrt(static_cast<double>(s[s.ndim() - 1])));
}

template <typename T>
ScaleElements<T> div_sqrt_dim(const TensorRef& x, const TensorRef& y, OpReq req) {
  return {x.ptr<T>(), y.ptr<T>(), div_sqrt_dim_scale<T>(x.shape), req};
}

void add_div_sqrt_dim(OpRegistry& r) {
  constexpr const char* kName = "_contrib_div_sqrt_dim";
  auto cpu = [](const TensorRef& x, const TensorRef& y, OpReq req) {
    dispatch_real(x.dtype, kName, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const ScaleElements<T> f = div_sqrt_dim<T>(x, y, req);
      map_index(f.y, y.size(), req, [&](int64_t i) { return static_cast<T>(f.x[i] * f.scale); });
    });
  };
  auto op = r.add<NoParams>(kName)
                .amp(AmpClass::kFloat32)
                .describe("data / sqrt(data.shape[-1]): scales attention queries.")
                .inputs({"data"})
                .infer_shape([](const NoParams&, ShapeVector& in, ShapeVector&, ShapeVector& out) {
                  infer_same_shape(in, out);
                  if (in[0].rank_known() && in[0].ndim() == 0)
                    throw ShapeError("input 'data' must have at least 1 dimension");
                })
                .inplace({{0, 0}})
                .backward_uses(false, false)
                .backward_inplace()
                .forward_cpu([cpu](const NoParams&, const ForwardCall& c) {
                  cpu(c.inputs[0], c.outputs[0], c.req[0]);
                })
                .backward_cpu([cpu](const NoParams&, const BackwardCall& c) {
                  if (c.req[0] == OpReq::kNull) return;
                  cpu(c.out_grads[0], c.in_grads[0], c.req[0]);
                });
#if MX_USE_CUDA
  auto gpu = [](const TensorRef& x, const TensorRef& y, OpReq req, void* stream) {
    dispatch_real(x.dtype, kName, [&](auto tag) {
      using T = typename decltype(tag)::type;
      cuda::run_sequence_elements(y.size(), stream, kName, div_sqrt_dim<T>(x, y, req));
    });
  };
  op.forward(DeviceKind::kGPU, [gpu](const NoParams&, const ForwardCall& c) {
    if (c.req[0] != OpReq::kNull) gpu(c.inputs[0], c.outputs[0], c.req[0], c.rctx.stream);
  });
  op.backward(DeviceKind::kGPU, [gpu](const NoParams&, const BackwardCall& c) {
    if (c.req[0] != OpReq::kNull) gpu(c.out_grads[0], c.in_grads[0], c.req[0], c.rctx.stream);
  });
#else
  (void)op;
#endif
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  add_interleaved(r, "_contrib_interleaved_matmul_selfatt_qk", AttentionKind::kSelfQK,
                  {"queries_keys_values"},
                  "Self-attention scores Q K^T / sqrt(d) from interleaved projections "
                  "(T, N, heads*3*d) (per head: query, key, value) into (N*heads, T, T), batch "
                  "n*heads + h. mx refuses a last axis that is not a multiple of 3*heads (MXNet "
                  "1.9.1 rounds down) and runs float64 as well as float32.");
  add_interleaved(r, "_contrib_interleaved_matmul_selfatt_valatt", AttentionKind::kSelfValAtt,
                  {"queries_keys_values", "attention"},
                  "Self-attention output: attention (N*heads, T, T) times the value projections "
                  "of the interleaved (T, N, heads*3*d) input, into (T, N, heads*d). mx checks "
                  "attention's first axis against N*heads (MXNet 1.9.1 does not) and runs float64 "
                  "as well as float32.");
  add_interleaved(r, "_contrib_interleaved_matmul_encdec_qk", AttentionKind::kEncDecQK,
                  {"queries", "keys_values"},
                  "Encoder-decoder attention scores Q K^T / sqrt(d): queries (T, N, heads*d), "
                  "interleaved keys and values (S, N, heads*2*d), into (N*heads, T, S). mx refuses "
                  "a queries axis that is not a multiple of heads and runs float64 as well as "
                  "float32.");
  add_interleaved(r, "_contrib_interleaved_matmul_encdec_valatt", AttentionKind::kEncDecValAtt,
                  {"keys_values", "attention"},
                  "Encoder-decoder attention output: attention (N*heads, T, S) times the value "
                  "projections of the interleaved (S, N, heads*2*d) input, into (T, N, heads*d). "
                  "mx refuses a last axis that is not a multiple of 2*heads and runs float64 as "
                  "well as float32.");
  add_div_sqrt_dim(r);
}

}  // namespace mx::op
