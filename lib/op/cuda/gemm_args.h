// The row-major product C = op(A) op(B) expressed as the column-major call
// cuBLAS takes. A row-major matrix with row stride ld is, read column-major,
// its transpose with leading dimension ld; so C^T = op(B)^T op(A)^T: the
// operands swap places, m and n swap, and each keeps its own transpose flag.
// Plain C++ (no CUDA headers), so the CPU tests check the mapping.
#pragma once

#include <cstdint>

namespace mx::op::cuda {

// A row-major product: op(A) is m x k, op(B) is k x n, C is m x n; lda, ldb
// and ldc are row strides.
struct RowMajorGemm {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
};

// A batch of `batch` such products whose operands lie a, b and c elements
// apart (cuBLAS's strided batched call, with a and b swapped as the operands).
struct BatchStrides {
  int64_t batch = 1;
  int64_t a = 0, b = 0, c = 0;
};

// The column-major call: op(first) is m x k, op(second) is k x n, C is
// m x n with leading dimension ldc (cuBLAS's arguments in their order).
// `first` is the row-major B, `second` the row-major A.
struct ColumnMajorGemm {
  bool trans_first = false, trans_second = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t ld_first = 0, ld_second = 0, ldc = 0;
};

inline ColumnMajorGemm to_column_major(const RowMajorGemm& g) {
  ColumnMajorGemm c;
  c.trans_first = g.trans_b;
  c.trans_second = g.trans_a;
  c.m = g.n;
  c.n = g.m;
  c.k = g.k;
  c.ld_first = g.ldb;
  c.ld_second = g.lda;
  c.ldc = g.ldc;
  return c;
}

}  // namespace mx::op::cuda
