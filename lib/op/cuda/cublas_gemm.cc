#include "op/cuda/cublas_gemm.h"

#include <climits>
#include <type_traits>

#include "op/cuda/cuda_check.h"
#include "op/cuda/handles.h"

namespace mx::op::cuda {
namespace {

// cuBLAS's 32-bit arguments: a larger size is an error, never a wrap.
int as_int(int64_t v, const char* what, std::string_view where) {
  if (v < 0 || v > INT_MAX)
    throw Error(str(where, ": matrix ", what, " ", v, " is out of cuBLAS's 32-bit range"));
  return static_cast<int>(v);
}

cublasOperation_t op_of(bool transpose) { return transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

template <typename T>
void gemm_any(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const T* a,
              const T* b, T* c, OpReq req, const BatchStrides& batch, double scale) {
  if (req == OpReq::kNull || g.m == 0 || g.n == 0 || batch.batch == 0) return;
  const auto stream = static_cast<cudaStream_t>(rctx.stream);
  if (g.k == 0) {
    // An empty sum: C is zero (kWrite) or unchanged (kAdd). cuBLAS would
    // reject the zero leading dimensions such products come with.
    if (req == OpReq::kAdd) return;
    for (int64_t i = 0; i < batch.batch; ++i)
      MX_CUDA_CHECK(
          cudaMemset2DAsync(c + i * batch.c, static_cast<size_t>(g.ldc) * sizeof(T), 0,
                            static_cast<size_t>(g.n) * sizeof(T), static_cast<size_t>(g.m), stream),
          where);
    return;
  }
  const ColumnMajorGemm cm = to_column_major(g);
  const int m = as_int(cm.m, "dimension", where), n = as_int(cm.n, "dimension", where),
            k = as_int(cm.k, "dimension", where);
  const int ld_first = as_int(cm.ld_first, "row stride", where),
            ld_second = as_int(cm.ld_second, "row stride", where),
            ldc = as_int(cm.ldc, "row stride", where);
  cublasHandle_t handle = cublas_handle(rctx);
  // cuBLAS's A is our B and its B our A (see gemm_args.h).
  const cublasOperation_t op_first = op_of(cm.trans_first), op_second = op_of(cm.trans_second);
  if constexpr (is_half_like_v<T>) {
    // 16-bit inputs and outputs, float32 sums (tensor cores), float scales.
    const float alpha = static_cast<float>(scale), beta = req == OpReq::kAdd ? 1.0f : 0.0f;
    const cudaDataType_t type = std::is_same_v<T, half_t> ? CUDA_R_16F : CUDA_R_16BF;
    if (batch.batch == 1) {
      MX_CUDA_CHECK(
          cublasGemmEx(handle, op_first, op_second, m, n, k, &alpha, b, type, ld_first, a, type,
                       ld_second, &beta, c, type, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          where);
    } else {
      MX_CUDA_CHECK(cublasGemmStridedBatchedEx(handle, op_first, op_second, m, n, k, &alpha, b,
                                               type, ld_first, static_cast<long long>(batch.b), a,
                                               type, ld_second, static_cast<long long>(batch.a),
                                               &beta, c, type, ldc, static_cast<long long>(batch.c),
                                               as_int(batch.batch, "batch count", where),
                                               CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                    where);
    }
  } else {
    const T alpha = static_cast<T>(scale), beta = req == OpReq::kAdd ? T(1) : T(0);
    if (batch.batch == 1) {
      if constexpr (std::is_same_v<T, float>)
        MX_CUDA_CHECK(cublasSgemm(handle, op_first, op_second, m, n, k, &alpha, b, ld_first, a,
                                  ld_second, &beta, c, ldc),
                      where);
      else
        MX_CUDA_CHECK(cublasDgemm(handle, op_first, op_second, m, n, k, &alpha, b, ld_first, a,
                                  ld_second, &beta, c, ldc),
                      where);
      return;
    }
    const int count = as_int(batch.batch, "batch count", where);
    const auto sa = static_cast<long long>(batch.a), sb = static_cast<long long>(batch.b),
               sc = static_cast<long long>(batch.c);
    if constexpr (std::is_same_v<T, float>)
      MX_CUDA_CHECK(
          cublasSgemmStridedBatched(handle, op_first, op_second, m, n, k, &alpha, b, ld_first, sb,
                                    a, ld_second, sa, &beta, c, ldc, sc, count),
          where);
    else
      MX_CUDA_CHECK(
          cublasDgemmStridedBatched(handle, op_first, op_second, m, n, k, &alpha, b, ld_first, sb,
                                    a, ld_second, sa, &beta, c, ldc, sc, count),
          where);
  }
}

}  // namespace

void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const float* a,
          const float* b, float* c, OpReq req, const BatchStrides& batch, double alpha) {
  gemm_any(rctx, where, g, a, b, c, req, batch, alpha);
}
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const double* a,
          const double* b, double* c, OpReq req, const BatchStrides& batch, double alpha) {
  gemm_any(rctx, where, g, a, b, c, req, batch, alpha);
}
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const half_t* a,
          const half_t* b, half_t* c, OpReq req, const BatchStrides& batch, double alpha) {
  gemm_any(rctx, where, g, a, b, c, req, batch, alpha);
}
void gemm(const RunContext& rctx, std::string_view where, const RowMajorGemm& g, const bf16_t* a,
          const bf16_t* b, bf16_t* c, OpReq req, const BatchStrides& batch, double alpha) {
  gemm_any(rctx, where, g, a, b, c, req, batch, alpha);
}

}  // namespace mx::op::cuda
