#include "op/blas.h"

#include <cblas.h>

#include <mutex>
#include <type_traits>

#include "base/error.h"
#include "base/parallel.h"
#include "base/strings.h"
#include "op/dnnl/dnnl_switch.h"
#if MX_USE_DNNL
#include <dnnl.h>
#include <omp.h>

#include "op/dnnl/dnnl_context.h"
#endif

namespace mx::op {
namespace {

#if MX_USE_DNNL
// float products through oneDNN's sgemm while oneDNN is on; the reference
// kernels keep OpenBLAS (MX_DNNL=0). Debian's OpenBLAS 0.3.21 falls back to
// its slowest kernels on CPUs it does not know (4-5x slower on a recent
// Xeon) unless OPENBLAS_CORETYPE names one, which mx's programs do but a
// program using mx as a library may not; with it set, oneDNN is about as
// fast or faster (bench_ops --net gemm). oneDNN threads its sgemm with
// OpenMP, as many threads as this thread's OpenMP setting, which is set for
// the call and restored: one inside a parallel_for (whose threads are
// already busy), else oneDNN's share of the thread budget. (k = 0, where C
// is only scaled by beta, stays with OpenBLAS.)
void dnnl_call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
               int threads) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(threads);
  const dnnl_status_t status =
      dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  omp_set_num_threads(saved);
  if (status != dnnl_success)
    throw Error(str("oneDNN sgemm failed (status ", static_cast<int>(status), ") on a ", m, "x", k,
                    " by ", k, "x", n, " product"));
}
#endif

// OpenBLAS runs single-threaded inside mx: parallelism comes from gemm()'s
// own split, within the thread budget.
void single_threaded_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

CBLAS_TRANSPOSE t(bool trans) { return trans ? CblasTrans : CblasNoTrans; }

void call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, t(ta), t(tb), static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}
void call(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, t(ta), t(tb), static_cast<int>(m), static_cast<int>(n),
              static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb), beta,
              c, static_cast<int>(ldc));
}

template <typename T>
void split_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  single_threaded_blas();
  if (m == 0 || n == 0) return;
  // Split rows of C when there is enough work per thread (~1 MFLOP), else
  // columns when C is a short wide matrix.
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>) {
    if (dnnl_enabled() && k > 0) {
      const bool one = flops < 2e6 || in_parallel_for();
      dnnl_call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                one ? 1 : dnnl_impl::dnnl_threads());
      return;
    }
  }
#endif
  if (flops < 2e6 || parallel_threads() == 1) {
    call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  if (m >= 2 * 16) {
    parallel_for(m, 16, [&](int64_t begin, int64_t end) {
      const T* a_rows = ta ? a + begin : a + begin * lda;
      call(ta, tb, end - begin, n, k, alpha, a_rows, lda, b, ldb, beta, c + begin * ldc, ldc);
    });
  } else {
    parallel_for(n, 64, [&](int64_t begin, int64_t end) {
      const T* b_cols = tb ? b + begin * ldb : b + begin;
      call(ta, tb, m, end - begin, k, alpha, a, lda, b_cols, ldb, beta, c + begin, ldc);
    });
  }
}

}  // namespace

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  split_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  split_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  single_threaded_blas();
  if (m == 0 || n == 0) return;
#if MX_USE_DNNL
  if (dnnl_enabled() && k > 0)
    return dnnl_call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, 1);
#endif
  call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm_serial(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  single_threaded_blas();
  if (m > 0 && n > 0) call(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace mx::op
