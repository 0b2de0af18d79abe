// blas.h's products: float32 through oneDNN's sgemm (while oneDNN is on)
// and through OpenBLAS (the reference, MX_DNNL=0) agree with a float64
// triple loop for every transpose, padded leading dimensions, beta 0 and 1,
// k = 0, and when called inside a parallel_for (oneDNN then runs on one
// thread).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "op/blas.h"
#include "op/dnnl/dnnl_switch.h"

namespace {

struct Product {
  bool ta, tb;
  int64_t m, n, k;
};

// C = alpha op(A) op(B) + beta C in float64, row-major with the given strides.
std::vector<double> reference(const Product& p, const std::vector<float>& a, int64_t lda,
                              const std::vector<float>& b, int64_t ldb, const std::vector<float>& c,
                              int64_t ldc, float alpha, float beta) {
  std::vector<double> out(c.begin(), c.end());
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        const double x =
            p.ta ? a[static_cast<size_t>(l * lda + i)] : a[static_cast<size_t>(i * lda + l)];
        const double y =
            p.tb ? b[static_cast<size_t>(j * ldb + l)] : b[static_cast<size_t>(l * ldb + j)];
        sum += x * y;
      }
      const auto at = static_cast<size_t>(i * ldc + j);
      out[at] = alpha * sum + beta * static_cast<double>(c[at]);
    }
  return out;
}

std::vector<float> pattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] =
        static_cast<float>(static_cast<int>((i * 37 + static_cast<size_t>(seed) * 11) % 23) - 11) /
        8.0f;
  return v;
}

void check_product(const Product& p, float beta, bool inside_parallel_for) {
  // Leading dimensions 3 wider than needed: the products must honour them.
  const int64_t lda = (p.ta ? p.m : p.k) + 3, ldb = (p.tb ? p.k : p.n) + 3, ldc = p.n + 3;
  const std::vector<float> a = pattern(static_cast<size_t>((p.ta ? p.k : p.m) * lda), 1);
  const std::vector<float> b = pattern(static_cast<size_t>((p.tb ? p.n : p.k) * ldb), 2);
  const std::vector<float> c0 = pattern(static_cast<size_t>(p.m * ldc), 3);
  const std::vector<double> want = reference(p, a, lda, b, ldb, c0, ldc, 0.5f, beta);
  for (bool dnnl : {false, true}) {
    if (dnnl && !mx::op::dnnl_built()) continue;
    const mx::op::ScopedDnnl use(dnnl);
    std::vector<float> c = c0;
    auto run = [&] {
      mx::op::gemm(p.ta, p.tb, p.m, p.n, p.k, 0.5f, a.data(), lda, b.data(), ldb, beta, c.data(),
                   ldc);
    };
    if (inside_parallel_for) {
      std::atomic<bool> saw_inside{false};
      mx::parallel_for(2, 1, [&](int64_t begin, int64_t) {
        if (!mx::in_parallel_for()) return;
        saw_inside = true;
        if (begin == 0) run();
      });
      // With one thread in the budget the loop runs inline, outside any chunk.
      if (!saw_inside) run();
    } else {
      run();
    }
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) {
        const auto at = static_cast<size_t>(i * ldc + j);
        INFO("dnnl=", dnnl, " ta=", p.ta, " tb=", p.tb, " m=", p.m, " n=", p.n, " k=", p.k,
             " beta=", beta, " at ", i, ",", j);
        REQUIRE(c[at] == doctest::Approx(want[at]).epsilon(1e-5).scale(1));
      }
    // Padding columns of C are left alone.
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = p.n; j < ldc; ++j)
        REQUIRE(c[static_cast<size_t>(i * ldc + j)] == c0[static_cast<size_t>(i * ldc + j)]);
  }
}

}  // namespace

TEST_CASE("in_parallel_for: true in every chunk of a parallel_for, false outside") {
  CHECK_FALSE(mx::in_parallel_for());
  std::atomic<int> inside{0}, chunks{0};
  mx::parallel_for(64, 1, [&](int64_t, int64_t) {
    ++chunks;
    if (mx::in_parallel_for()) ++inside;
  });
  if (mx::parallel_threads() > 1) CHECK(inside.load() == chunks.load());
  CHECK_FALSE(mx::in_parallel_for());
}

TEST_CASE("gemm: oneDNN's sgemm and OpenBLAS agree with float64 for every layout") {
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      // The last two are large enough (2 MFLOP) for OpenBLAS's path to split
      // the product over the threads: by rows of C, and by columns when C
      // has few rows.
      for (const Product& shape : {Product{ta, tb, 1, 1, 1}, Product{ta, tb, 7, 5, 3},
                                   Product{ta, tb, 64, 32, 64}, Product{ta, tb, 130, 70, 90},
                                   Product{ta, tb, 200, 100, 80}, Product{ta, tb, 16, 600, 256}})
        for (float beta : {0.0f, 1.0f}) check_product(shape, beta, false);
}

TEST_CASE("gemm: inside a parallel_for, and with k = 0 (C scaled by beta)") {
  check_product({false, true, 64, 64, 32}, 0.0f, true);
  check_product({true, false, 64, 32, 64}, 1.0f, true);
  check_product({false, false, 5, 4, 0}, 1.0f, false);
  check_product({false, false, 5, 4, 0}, 0.0f, false);
}

TEST_CASE("gemm_serial agrees with gemm") {
  const Product p{false, true, 48, 40, 24};
  const int64_t lda = p.k, ldb = p.k, ldc = p.n;
  const std::vector<float> a = pattern(static_cast<size_t>(p.m * lda), 4);
  const std::vector<float> b = pattern(static_cast<size_t>(p.n * ldb), 5);
  for (bool dnnl : {false, true}) {
    if (dnnl && !mx::op::dnnl_built()) continue;
    const mx::op::ScopedDnnl use(dnnl);
    std::vector<float> c1(static_cast<size_t>(p.m * ldc)), c2(c1.size());
    mx::op::gemm(p.ta, p.tb, p.m, p.n, p.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c1.data(),
                 ldc);
    mx::op::gemm_serial(p.ta, p.tb, p.m, p.n, p.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f,
                        c2.data(), ldc);
    for (size_t i = 0; i < c1.size(); ++i) REQUIRE(c1[i] == doctest::Approx(c2[i]).epsilon(1e-6));
  }
}
