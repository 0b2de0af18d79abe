// Matrix products for the CPU kernels. Row-major, as the tensors are laid
// out. float32 goes through oneDNN's sgemm while oneDNN is on (threaded by
// oneDNN, one thread inside a parallel_for), else through OpenBLAS: large
// products are then split over the thread budget by rows of C, with
// single-threaded BLAS calls, so BLAS threads and mx's own threads never
// oversubscribe the cores.
#pragma once

#include <cstdint>

namespace mx::op {

// C = alpha * op(A) * op(B) + beta * C, with op(X) = X or X^T.
// op(A) is m x k, op(B) is k x n, C is m x n; lda/ldb/ldc are row strides.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);
// The same without splitting: for callers that are already parallel.
void gemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                 int64_t ldc);
void gemm_serial(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                 const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                 int64_t ldc);

}  // namespace mx::op
