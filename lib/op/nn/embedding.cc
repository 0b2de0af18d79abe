// Embedding: looks up rows of `weight` (input_dim, output_dim) by the
// indices in `data` (any real or integer dtype; fractions are truncated).
// Indices outside [0, input_dim) are clipped to the nearest row, as MXNet
// does (kernels::embedding_row, shared with the GPU kernels), and the
// gradient goes to the row that was read. Only the weight has a gradient.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/parallel.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/embedding_kernels.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/embedding_gpu.h"
#include "op/cuda/tensor_gpu.h"
#endif

namespace mx::op {
namespace {

struct EmbeddingParam : Params<EmbeddingParam> {
  int64_t input_dim = 0;
  int64_t output_dim = 0;
  DType dtype = DType::kFloat32;
  bool sparse_grad = false;

  static void declare(ParamDecl<EmbeddingParam>& d) {
    d.field("input_dim", &EmbeddingParam::input_dim)
        .set_lower_bound(1)
        .describe("Number of rows of the weight (the vocabulary size).");
    d.field("output_dim", &EmbeddingParam::output_dim)
        .set_lower_bound(1)
        .describe("Length of each embedding vector.");
    d.field("dtype", &EmbeddingParam::dtype)
        .set_default(DType::kFloat32)
        .describe("Type of the weight and the output.");
    d.field("sparse_grad", &EmbeddingParam::sparse_grad)
        .set_default(false)
        .describe("Accepted for compatibility: the weight gradient is always dense here.");
  }
};

void infer_embedding(const EmbeddingParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  Shape& data = in[0];
  if (!data.rank_known() && out[0].rank_known() && out[0].ndim() >= 1) {
    // The indices' shape is the output's without its last axis.
    std::vector<int64_t> dims(out[0].begin(), out[0].end() - 1);
    data = Shape(dims);
  }
  assign_shape(in[1], Shape{p.input_dim, p.output_dim}, "input 'weight'");
  if (!data.rank_known()) return;
  std::vector<int64_t> dims(data.begin(), data.end());
  dims.push_back(p.output_dim);
  assign_shape(out[0], Shape(dims), "output");
  for (int i = 0; i < data.ndim(); ++i)
    if (data[i] < 0 && out[0][i] >= 0) data[i] = out[0][i];
}

void infer_embedding_type(const EmbeddingParam& p, DTypeVector& in, DTypeVector&,
                          DTypeVector& out) {
  if (!is_floating(p.dtype) || p.dtype == DType::kFloat16)
    throw InputError(
        str("dtype ", dtype_name(p.dtype), " is not supported; use float32 or float64"));
  // Indices of unknown type are taken to be the weight's type, as data
  // loaders produce them.
  if (!in[0]) in[0] = p.dtype;
  assign_type(in[1], p.dtype, "input 'weight'");
  assign_type(out[0], p.dtype, "output");
}

template <typename T>
void embedding_forward(const EmbeddingParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  const T* w = c.inputs[1].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  const int64_t count = c.inputs[0].size(), dim = p.output_dim;
  kernels::dispatch_embedding_index(c.inputs[0], [&](const auto* idx) {
    parallel_for(count, std::max<int64_t>(1, kParallelGrain / dim),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end; ++i) {
                     const T* row = w + kernels::embedding_row(idx[i], p.input_dim) * dim;
                     T* dst = y + i * dim;
                     if (c.req[0] == OpReq::kAdd) {
                       for (int64_t j = 0; j < dim; ++j) dst[j] += row[j];
                     } else {
                       std::memcpy(dst, row, static_cast<size_t>(dim) * sizeof(T));
                     }
                   }
                 });
  });
}

template <typename T>
void embedding_backward(const EmbeddingParam& p, const BackwardCall& c) {
  // The output does not depend smoothly on the indices: their gradient is 0.
  if (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace) {
    TensorRef g = c.in_grads[0];
    std::memset(g.data, 0, static_cast<size_t>(g.size()) * dtype_size(g.dtype));
  }
  if (c.req[1] == OpReq::kNull) return;
  const T* dy = c.out_grads[0].ptr<T>();
  T* dw = c.in_grads[1].ptr<T>();
  const int64_t count = c.inputs[0].size(), dim = p.output_dim;
  if (c.req[1] != OpReq::kAdd) std::fill(dw, dw + p.input_dim * dim, T(0));
  kernels::dispatch_embedding_index(c.inputs[0], [&](const auto* idx) {
    // Split over columns: every thread visits the indices in order, so the
    // sums do not depend on the thread count and no two threads share a value.
    parallel_for(dim, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(count, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = 0; i < count; ++i) {
                     T* row = dw + kernels::embedding_row(idx[i], p.input_dim) * dim;
                     const T* src = dy + i * dim;
                     for (int64_t j = begin; j < end; ++j) row[j] += src[j];
                   }
                 });
  });
}

}  // namespace

void register_embedding_ops(OpRegistry& r) {
  auto embedding = r.add<EmbeddingParam>("Embedding")
                       .amp(AmpClass::kFloat32)
                       .describe("Maps integer indices to rows of a learned weight matrix.")
                       .inputs({"data", "weight"})
                       .infer_shape(infer_embedding)
                       .infer_type(infer_embedding_type)
                       .backward_uses(true, false)
                       .forward_cpu([](const EmbeddingParam& p, const ForwardCall& c) {
                         dispatch_real(c.inputs[1].dtype, "Embedding", [&](auto tag) {
                           embedding_forward<typename decltype(tag)::type>(p, c);
                         });
                       })
                       .backward_cpu([](const EmbeddingParam& p, const BackwardCall& c) {
                         dispatch_real(c.inputs[1].dtype, "Embedding", [&](auto tag) {
                           embedding_backward<typename decltype(tag)::type>(p, c);
                         });
                       });
#if MX_USE_CUDA
  embedding.forward(DeviceKind::kGPU, [](const EmbeddingParam&, const ForwardCall& c) {
    cuda::embedding_forward_gpu(c.rctx, c.inputs[0], c.inputs[1], c.outputs[0], c.req[0]);
  });
  embedding.backward(DeviceKind::kGPU, [](const EmbeddingParam&, const BackwardCall& c) {
    // The output does not depend smoothly on the indices: their gradient is 0.
    if (c.req[0] == OpReq::kWrite || c.req[0] == OpReq::kInplace)
      cuda::zero_gpu(c.rctx, "Embedding", c.in_grads[0]);
    cuda::embedding_backward_gpu(c.rctx, c.inputs[0], c.out_grads[0], c.in_grads[1], c.req[1]);
  });
#else
  (void)embedding;
#endif
}

}  // namespace mx::op
