// dot and batch_dot as row-major matrix products: the shapes of the product
// from the operands' shapes (MXNet's N-D rule), and the products that give
// its gradients. One definition for the CPU kernels (OpenBLAS) and the GPU
// kernels (cuBLAS through op/cuda/cublas_gemm.h), tested on the CPU.
#pragma once

#include <array>
#include <cstdint>

#include "base/shape.h"
#include "op/cuda/gemm_args.h"
#include "op/tensor_ref.h"

namespace mx::op {

// The product as matrices: op(A) is m x k, op(B) is k x n; A and B are stored
// as lda/ldb-strided row-major matrices.
struct ProductDims {
  int64_t m = 1, n = 1, k = 1, lda = 1, ldb = 1;
};

// dot: the last axis of lhs (its first with transpose_a) against the first
// axis of rhs (its last with transpose_b); the other axes flattened.
inline ProductDims dot_dims(bool transpose_a, bool transpose_b, const Shape& l, const Shape& r) {
  ProductDims g;
  if (transpose_a) {
    g.k = l[0];
    g.m = l.prod(1, l.ndim());
    g.lda = g.m;
  } else {
    g.k = l[l.ndim() - 1];
    g.m = l.prod(0, l.ndim() - 1);
    g.lda = g.k;
  }
  if (transpose_b) {
    g.n = r.prod(0, r.ndim() - 1);
    g.ldb = r[r.ndim() - 1];
  } else {
    g.n = r.prod(1, r.ndim());
    g.ldb = g.n;
  }
  return g;
}

// batch_dot: one product of the last two axes per index of the leading ones.
struct BatchDims {
  ProductDims g;
  int64_t batch = 1;
};

inline BatchDims batch_dims(bool transpose_a, bool transpose_b, const Shape& l, const Shape& r) {
  const int nd = l.ndim();
  BatchDims bg;
  bg.batch = l.prod(0, nd - 2);
  ProductDims& g = bg.g;
  g.m = transpose_a ? l[nd - 1] : l[nd - 2];
  g.k = transpose_a ? l[nd - 2] : l[nd - 1];
  g.n = transpose_b ? r[nd - 2] : r[nd - 1];
  g.lda = l[nd - 1];
  g.ldb = r[nd - 1];
  return bg;
}

// The forward product C (m x n, dense) = op(A) op(B).
inline cuda::RowMajorGemm forward_product(bool transpose_a, bool transpose_b,
                                          const ProductDims& g) {
  return {transpose_a, transpose_b, g.m, g.n, g.k, g.lda, g.ldb, g.n};
}

// The operands of a product C = op(A) op(B) and of its gradients.
enum class Operand { kA, kB, kDC, kDA, kDB };

// Elements between consecutive matrices of `o` in a batch.
inline int64_t batch_stride(const ProductDims& g, Operand o) {
  if (o == Operand::kA || o == Operand::kDA) return g.m * g.k;
  if (o == Operand::kB || o == Operand::kDB) return g.k * g.n;
  return g.m * g.n;
}

// One product of the backward pass: out (req) op(lhs) op(rhs).
struct GradProduct {
  cuda::RowMajorGemm gemm;
  Operand lhs, rhs, out;
  OpReq req;
};

// The products that give the gradients of C = op(A) op(B) (none for a
// gradient whose request is kNull).
struct GradProducts {
  std::array<GradProduct, 2> items;
  int count = 0;
};

inline GradProducts grad_products(bool ta, bool tb, const ProductDims& g, OpReq req_a,
                                  OpReq req_b) {
  GradProducts ps;
  auto add = [&](bool x, bool y, int64_t m, int64_t n, int64_t k, Operand lhs, int64_t ll,
                 Operand rhs, int64_t lr, Operand out, int64_t lo, OpReq req) {
    ps.items[static_cast<size_t>(ps.count++)] = {{x, y, m, n, k, ll, lr, lo}, lhs, rhs, out, req};
  };
  if (req_a != OpReq::kNull) {
    if (!ta)  // dA = dC op(B)^T
      add(false, !tb, g.m, g.k, g.n, Operand::kDC, g.n, Operand::kB, g.ldb, Operand::kDA, g.k,
          req_a);
    else  // dA = op(B) dC^T
      add(tb, true, g.k, g.m, g.n, Operand::kB, g.ldb, Operand::kDC, g.n, Operand::kDA, g.m, req_a);
  }
  if (req_b != OpReq::kNull) {
    if (!tb)  // dB = op(A)^T dC
      add(!ta, false, g.k, g.n, g.m, Operand::kA, g.lda, Operand::kDC, g.n, Operand::kDB, g.n,
          req_b);
    else  // dB = dC^T op(A)
      add(true, ta, g.n, g.k, g.m, Operand::kDC, g.n, Operand::kA, g.lda, Operand::kDB, g.k, req_b);
  }
  return ps;
}

}  // namespace mx::op
