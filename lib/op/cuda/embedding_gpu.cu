#include <type_traits>

#include "op/cuda/embedding_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/infer_util.h"
#include "op/nn/embedding_kernels.h"

namespace mx::op::cuda {

void embedding_forward_gpu(const RunContext& rctx, const TensorRef& indices,
                           const TensorRef& weight, const TensorRef& out, OpReq req) {
  if (req == OpReq::kNull) return;
  const int64_t rows = weight.shape[0], dim = weight.shape[1];
  dispatch_real(weight.dtype, "Embedding", [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::dispatch_embedding_index(indices, [&](const auto* idx) {
      using I = std::remove_cv_t<std::remove_pointer_t<decltype(idx)>>;
      launch_elements(
          indices.size() * dim, stream_of(rctx.stream), "Embedding",
          kernels::EmbeddingGather<T, I>{out.ptr<T>(), weight.ptr<T>(), idx, rows, dim, req});
    });
  });
}

void embedding_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& dy,
                            const TensorRef& dweight, OpReq req) {
  if (req == OpReq::kNull) return;
  const cudaStream_t stream = stream_of(rctx.stream);
  const int64_t rows = dweight.shape[0], dim = dweight.shape[1];
  if (req != OpReq::kAdd && dweight.size() > 0)
    MX_CUDA_CHECK(
        cudaMemsetAsync(dweight.data, 0,
                        static_cast<size_t>(dweight.size()) * dtype_size(dweight.dtype), stream),
        "Embedding");
  dispatch_real(dweight.dtype, "Embedding", [&](auto tag) {
    using T = typename decltype(tag)::type;
    kernels::dispatch_embedding_index(indices, [&](const auto* idx) {
      using I = std::remove_cv_t<std::remove_pointer_t<decltype(idx)>>;
      launch_elements(
          indices.size() * dim, stream, "Embedding",
          kernels::EmbeddingScatterAdd<T, I>{dweight.ptr<T>(), dy.ptr<T>(), idx, rows, dim});
    });
  });
}

}  // namespace mx::op::cuda
