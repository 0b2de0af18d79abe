#include "op/cuda/handles.h"

#include <map>
#include <mutex>

#include "op/cuda/cuda_check.h"
#include "op/cuda/math_settings.h"

namespace mx::op::cuda {
namespace {

template <typename Handle>
struct HandleTable {
  std::mutex mutex;
  std::map<cudaStream_t, Handle> by_stream;
};

cudaStream_t stream_of(const RunContext& rctx) {
  MX_CHECK(rctx.ctx.is_gpu(), "a cuBLAS/cuDNN handle was asked for on ", rctx.ctx.to_string());
  return static_cast<cudaStream_t>(rctx.stream);
}

}  // namespace

cublasHandle_t cublas_handle(const RunContext& rctx) {
  static auto* table = new HandleTable<cublasHandle_t>;  // never destroyed (see header)
  const cudaStream_t stream = stream_of(rctx);
  std::lock_guard lock(table->mutex);
  auto it = table->by_stream.find(stream);
  if (it != table->by_stream.end()) return it->second;
  MX_CUDA_CHECK(cudaSetDevice(rctx.ctx.id), "cuBLAS");
  cublasHandle_t handle = nullptr;
  MX_CUDA_CHECK(cublasCreate(&handle), "cuBLAS");
  MX_CUDA_CHECK(cublasSetStream(handle, stream), "cuBLAS");
  // float32 stays float32 (results comparable to the CPU) unless MX_GPU_TF32=1.
  MX_CUDA_CHECK(
      cublasSetMathMode(handle, tf32_allowed() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
      "cuBLAS");
  table->by_stream.emplace(stream, handle);
  return handle;
}

cudnnHandle_t cudnn_handle(const RunContext& rctx) {
  static auto* table = new HandleTable<cudnnHandle_t>;  // never destroyed (see header)
  const cudaStream_t stream = stream_of(rctx);
  std::lock_guard lock(table->mutex);
  auto it = table->by_stream.find(stream);
  if (it != table->by_stream.end()) return it->second;
  MX_CUDA_CHECK(cudaSetDevice(rctx.ctx.id), "cuDNN");
  cudnnHandle_t handle = nullptr;
  MX_CUDA_CHECK(cudnnCreate(&handle), "cuDNN");
  MX_CUDA_CHECK(cudnnSetStream(handle, stream), "cuDNN");
  table->by_stream.emplace(stream, handle);
  return handle;
}

}  // namespace mx::op::cuda
