// The GPU kernels of the GEMM, shaping, Concat/SliceChannel, Embedding,
// one_hot and Cast operators, checked on the CPU: their per-element functors
// (op/tensor/tensor_kernels.h, op/nn/*_kernels.h) run with
// for_each_element_host over the index spaces the GPU launches, and the
// cuBLAS argument sets (row-major products mapped to column-major calls) run
// through a column-major reference GEMM; both are compared with the CPU
// operators through op::invoke.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>

#include "op/cuda/gemm_args.h"
#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/nn/embedding_kernels.h"
#include "op/nn/fully_connected_kernels.h"
#include "op/tensor/dot_products.h"
#include "op/tensor/tensor_kernels.h"
#include "op_harness.h"

using namespace mx;
using op::for_each_element_host;
using op::OpReq;
namespace kernels = mx::op::kernels;

namespace {

const std::vector<DType> kAllTypes = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                      DType::kUint8,   DType::kInt32,   DType::kInt8,
                                      DType::kInt64};

// `a` once every pending write to it is done: the functors below write into
// arrays directly, outside the engine.
NDArray ready(NDArray a) {
  a.wait_to_read();
  return a;
}
NDArray zeros(const Shape& shape, DType dtype) {
  return ready(NDArray::zeros(shape, Context::cpu(), dtype));
}
NDArray nans(const Shape& shape, DType dtype) {
  return ready(NDArray::full(shape, std::nan(""), Context::cpu(), dtype));
}

// Values from [low, high] in float64, cast to `dtype` by the CPU's Cast.
NDArray random_array(const Shape& shape, DType dtype, std::mt19937_64& rng, double low = -3.0,
                     double high = 3.0) {
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> values(static_cast<size_t>(shape.size()));
  for (double& v : values) v = uniform(rng);
  NDArray a = NDArray::from_vector<double>(shape, values);
  if (dtype == DType::kFloat64) return ready(a);
  return ready(op::invoke("Cast", {a}, {{"dtype", dtype_name(dtype)}})[0]);
}

NDArray from_doubles(const Shape& shape, const std::vector<double>& values, DType dtype) {
  NDArray a = NDArray::from_vector<double>(shape, values);
  if (dtype == DType::kFloat64) return ready(a);
  return ready(op::invoke("Cast", {a}, {{"dtype", dtype_name(dtype)}})[0]);
}

// A new array holding the same bytes.
NDArray copy_of(const NDArray& a) {
  NDArray c = a.copy();
  c.wait_to_read();
  return c;
}

void expect_same_bits(const NDArray& got, const NDArray& want) {
  got.wait_to_read();
  want.wait_to_read();
  REQUIRE(got.shape() == want.shape());
  REQUIRE(got.dtype() == want.dtype());
  CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.bytes()) == 0);
}

void expect_close(const NDArray& got, const NDArray& want, double tol = 1e-10) {
  got.wait_to_read();
  want.wait_to_read();
  REQUIRE(got.shape() == want.shape());
  CHECK(test::closeness(got, want, tol, tol) <= 1.0);
}

// cuBLAS's gemm on the host: column-major, C = op(A) op(B) + beta C, C not
// read when beta is 0.
template <typename T>
void column_major_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                       const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? a[p + i * lda] : a[i + p * lda]) * (tb ? b[j + p * ldb] : b[p + j * ldb]);
      T& out = c[i + j * ldc];
      out = beta == T(0) ? sum : sum + beta * out;
    }
}

// What op/cuda/cublas_gemm.cc asks of cuBLAS, run with the reference above.
template <typename T>
void gemm_as_cublas(const op::cuda::RowMajorGemm& g, const T* a, const T* b, T* c, OpReq req,
                    const op::cuda::BatchStrides& batch = {}) {
  if (req == OpReq::kNull || g.m == 0 || g.n == 0) return;
  const op::cuda::ColumnMajorGemm cm = op::cuda::to_column_major(g);
  for (int64_t i = 0; i < batch.batch; ++i)
    column_major_gemm(cm.trans_first, cm.trans_second, cm.m, cm.n, cm.k, b + i * batch.b,
                      cm.ld_first, a + i * batch.a, cm.ld_second, req == OpReq::kAdd ? T(1) : T(0),
                      c + i * batch.c, cm.ldc);
}

// The plain row-major product, for the mapping test.
void row_major_gemm(const op::cuda::RowMajorGemm& g, const double* a, const double* b, double* c) {
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < g.k; ++p)
        sum += (g.trans_a ? a[p * g.lda + i] : a[i * g.lda + p]) *
               (g.trans_b ? b[j * g.ldb + p] : b[p * g.ldb + j]);
      c[i * g.ldc + j] = sum;
    }
}

}  // namespace

TEST_CASE("row-major products map to the column-major call cuBLAS takes") {
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      CAPTURE(ta);
      CAPTURE(tb);
      const int64_t m = 3, n = 4, k = 5;
      // Stored shapes with padded row strides.
      const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
      const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
      const op::cuda::RowMajorGemm g{ta, tb, m, n, k, a_cols + 2, b_cols + 1, n + 3};
      std::vector<double> a(static_cast<size_t>(a_rows * g.lda)),
          b(static_cast<size_t>(b_rows * g.ldb));
      for (double& v : a) v = uniform(rng);
      for (double& v : b) v = uniform(rng);
      std::vector<double> want(static_cast<size_t>(m * g.ldc), 0.0), got = want;
      row_major_gemm(g, a.data(), b.data(), want.data());
      gemm_as_cublas(g, a.data(), b.data(), got.data(), OpReq::kWrite);
      for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
      // kAdd adds the product once more.
      gemm_as_cublas(g, a.data(), b.data(), got.data(), OpReq::kAdd);
      for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(2 * want[i]));
    }
}

namespace {

struct DotCase {
  const char* op;
  Shape lhs, rhs;
  bool ta, tb;
};

}  // namespace

TEST_CASE("dot and batch_dot: the GPU's products and gradients match the CPU operators") {
  const std::vector<DotCase> cases = {
      {"dot", {3, 4}, {4, 5}, false, false},
      {"dot", {4, 3}, {4, 5}, true, false},
      {"dot", {3, 4}, {5, 4}, false, true},
      {"dot", {4, 3}, {5, 4}, true, true},
      {"dot", {2, 3, 4}, {4, 5}, false, false},
      {"dot", {4, 2, 3}, {4, 5, 2}, true, false},
      {"dot", {2, 3, 4}, {5, 2, 4}, false, true},
      {"dot", {4}, {4}, false, false},
      {"dot", {4}, {4, 5}, false, false},
      {"dot", {3, 4}, {4}, false, false},
      {"batch_dot", {2, 3, 4}, {2, 4, 5}, false, false},
      {"batch_dot", {2, 4, 3}, {2, 4, 5}, true, false},
      {"batch_dot", {2, 3, 4}, {2, 5, 4}, false, true},
      {"batch_dot", {3, 2, 4, 3}, {3, 2, 5, 4}, true, true},
  };
  std::mt19937_64 rng(2);
  for (const DotCase& dc : cases) {
    CAPTURE(dc.op);
    CAPTURE(dc.lhs.to_string());
    CAPTURE(dc.ta);
    CAPTURE(dc.tb);
    const op::AttrMap attrs = {{"transpose_a", dc.ta ? "True" : "False"},
                               {"transpose_b", dc.tb ? "True" : "False"}};
    const NDArray a = random_array(dc.lhs, DType::kFloat64, rng);
    const NDArray b = random_array(dc.rhs, DType::kFloat64, rng);
    const NDArray want = op::invoke(dc.op, {a, b}, attrs)[0];
    want.wait_to_read();
    const bool batched = std::string(dc.op) == "batch_dot";
    const op::BatchDims bd = batched ? op::batch_dims(dc.ta, dc.tb, dc.lhs, dc.rhs)
                                     : op::BatchDims{op::dot_dims(dc.ta, dc.tb, dc.lhs, dc.rhs), 1};
    const op::ProductDims& g = bd.g;
    auto strides = [&](op::Operand x, op::Operand y, op::Operand z) {
      return op::cuda::BatchStrides{bd.batch, op::batch_stride(g, x), op::batch_stride(g, y),
                                    op::batch_stride(g, z)};
    };

    NDArray got = nans(want.shape(), DType::kFloat64);
    gemm_as_cublas(op::forward_product(dc.ta, dc.tb, g), a.data<double>(), b.data<double>(),
                   got.data<double>(), OpReq::kWrite,
                   strides(op::Operand::kA, op::Operand::kB, op::Operand::kDC));
    expect_close(got, want);

    // Gradients: written (kWrite) into the left, added (kAdd) onto the right.
    const NDArray dc_grad = random_array(want.shape(), DType::kFloat64, rng);
    const NDArray base_b = random_array(dc.rhs, DType::kFloat64, rng);
    NDArray want_da = zeros(dc.lhs, DType::kFloat64);
    NDArray want_db = copy_of(base_b);
    op::OpInstance inst(dc.op, attrs);
    op::invoke_backward(inst, {dc_grad}, {a, b}, {want}, {}, {want_da, want_db},
                        {OpReq::kWrite, OpReq::kAdd});
    want_da.wait_to_read();
    want_db.wait_to_read();
    NDArray got_da = nans(dc.lhs, DType::kFloat64);
    NDArray got_db = copy_of(base_b);
    const op::GradProducts ps = op::grad_products(dc.ta, dc.tb, g, OpReq::kWrite, OpReq::kAdd);
    REQUIRE(ps.count == 2);
    auto data = [&](op::Operand o) -> const double* {
      return o == op::Operand::kA   ? a.data<double>()
             : o == op::Operand::kB ? b.data<double>()
                                    : dc_grad.data<double>();
    };
    for (int i = 0; i < ps.count; ++i) {
      const op::GradProduct& p = ps.items[static_cast<size_t>(i)];
      double* out = (p.out == op::Operand::kDA ? got_da : got_db).data<double>();
      gemm_as_cublas(p.gemm, data(p.lhs), data(p.rhs), out, p.req, strides(p.lhs, p.rhs, p.out));
    }
    expect_close(got_da, want_da);
    expect_close(got_db, want_db);
    // A null request computes nothing.
    CHECK(op::grad_products(dc.ta, dc.tb, g, OpReq::kNull, OpReq::kWrite).count == 1);
  }
}

TEST_CASE("FullyConnected: the GPU's products, bias rows and bias gradient match the CPU") {
  struct Case {
    Shape data;
    int hidden;
    bool flatten, no_bias;
  };
  std::mt19937_64 rng(3);
  for (const Case& fc : {Case{{4, 2, 3}, 5, true, false}, Case{{2, 3, 4}, 3, false, false},
                         Case{{3, 7}, 2, true, true}}) {
    CAPTURE(fc.data.to_string());
    const int64_t rows = fc.flatten ? fc.data[0] : fc.data.prod(0, fc.data.ndim() - 1);
    const int64_t k = fc.flatten ? fc.data.prod(1, fc.data.ndim()) : fc.data[fc.data.ndim() - 1];
    const int64_t h = fc.hidden;
    const op::AttrMap attrs = {{"num_hidden", std::to_string(h)},
                               {"flatten", fc.flatten ? "True" : "False"},
                               {"no_bias", fc.no_bias ? "True" : "False"}};
    std::vector<NDArray> inputs = {random_array(fc.data, DType::kFloat64, rng),
                                   random_array({h, k}, DType::kFloat64, rng)};
    if (!fc.no_bias) inputs.push_back(random_array({h}, DType::kFloat64, rng));
    const NDArray want = op::invoke("FullyConnected", inputs, attrs)[0];
    want.wait_to_read();

    // Forward as the GPU does it: the bias in every row, then the product added.
    NDArray got = nans(want.shape(), DType::kFloat64);
    OpReq req = OpReq::kWrite;
    if (!fc.no_bias) {
      for_each_element_host(rows * h, kernels::BiasRows<double>{got.data<double>(),
                                                                inputs[2].data<double>(), h, req});
      req = OpReq::kAdd;
    }
    gemm_as_cublas(kernels::fc_output_product(rows, k, h), inputs[0].data<double>(),
                   inputs[1].data<double>(), got.data<double>(), req);
    expect_close(got, want);

    // Backward, every gradient written.
    const NDArray dy = random_array(want.shape(), DType::kFloat64, rng);
    std::vector<NDArray> want_grads, got_grads;
    for (const NDArray& in : inputs) {
      want_grads.push_back(zeros(in.shape(), DType::kFloat64));
      got_grads.push_back(nans(in.shape(), DType::kFloat64));
    }
    op::OpInstance inst("FullyConnected", attrs);
    op::invoke_backward(inst, {dy}, inputs, {want}, {}, want_grads,
                        std::vector<OpReq>(inputs.size(), OpReq::kWrite));
    gemm_as_cublas(kernels::fc_data_grad_product(rows, k, h), dy.data<double>(),
                   inputs[1].data<double>(), got_grads[0].data<double>(), OpReq::kWrite);
    gemm_as_cublas(kernels::fc_weight_grad_product(rows, k, h), dy.data<double>(),
                   inputs[0].data<double>(), got_grads[1].data<double>(), OpReq::kWrite);
    if (!fc.no_bias) {
      const kernels::ColumnSums<double> sums{got_grads[2].data<double>(), dy.data<double>(), rows,
                                             h, OpReq::kWrite};
      for_each_element_host(h, sums);
      // The GPU's split: 8 parts of every column's rows, added in order.
      NDArray parted = nans(inputs[2].shape(), DType::kFloat64);
      const kernels::ColumnSums<double> by_parts{parted.data<double>(), dy.data<double>(), rows, h,
                                                 OpReq::kWrite};
      for (int64_t j = 0; j < h; ++j) {
        double sum = 0;
        for (int64_t part = 0; part < 8; ++part) sum += by_parts.partial(j, part, 8);
        by_parts.write_sum(j, sum);
      }
      expect_close(parted, want_grads[2]);
    }
    for (size_t i = 0; i < inputs.size(); ++i) expect_close(got_grads[i], want_grads[i]);
  }
}

namespace {

// Runs the GPU's transpose functor for output axis d = input axis perm[d].
NDArray transpose_host(const NDArray& in, const std::vector<int>& perm, const NDArray& start,
                       OpReq req) {
  NDArray out = copy_of(start);
  const kernels::TransposeIndex index = kernels::transpose_index(in.shape(), perm, "transpose");
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_element_host(in.size(),
                          kernels::TransposeCopy<T>{out.data<T>(), in.data<T>(), index, req});
  });
  return out;
}

// Runs the GPU's tiled transpose as its kernel moves data: plane by plane,
// element (a, b) from in[b + a * a_in_stride] to out[b * b_out_stride + a];
// an empty result where the transpose has no tiles.
std::optional<NDArray> transpose_tiles_host(const NDArray& in, const std::vector<int>& perm,
                                            const NDArray& start, OpReq req) {
  const kernels::TransposeTiles t =
      kernels::transpose_tiles(kernels::transpose_index(in.shape(), perm, "transpose"));
  if (t.b_dim == 0) return std::nullopt;
  NDArray out = copy_of(start);
  dispatch_dtype(in.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = in.data<T>();
    T* y = out.data<T>();
    for (int64_t r = 0; r < t.rest_count(); ++r) {
      int64_t in_off, out_off;
      t.rest_offsets(r, in_off, out_off);
      for (int64_t b = 0; b < t.b_dim; ++b)
        for (int64_t a = 0; a < t.a_dim; ++a)
          kernels::store_value(y + out_off + b * t.b_out_stride + a, req,
                               x[in_off + b + a * t.a_in_stride]);
    }
  });
  return out;
}

}  // namespace

TEST_CASE("transpose: the GPU's index map matches the CPU operator, forward and backward") {
  struct Case {
    Shape shape;
    std::vector<int> axes;  // empty: reversed
  };
  std::mt19937_64 rng(4);
  int tiled_cases = 0;  // cases the GPU moves in tiles (transpose_tiles), in every dtype
  for (const Case& tc : {Case{{2, 3, 4}, {2, 0, 1}}, Case{{2, 3, 4}, {}}, Case{{1, 3}, {1, 0}},
                         Case{{2, 1, 3, 2}, {3, 1, 0, 2}}, Case{{3, 4, 5}, {0, 2, 1}},
                         Case{{5}, {0}}, Case{{3, 40, 35}, {0, 2, 1}}, Case{{20, 3, 17}, {}},
                         Case{{2, 33, 4, 18}, {3, 0, 2, 1}}, Case{{4, 5, 6}, {1, 0, 2}}}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt8}) {
      CAPTURE(tc.shape.to_string());
      CAPTURE(std::string(dtype_name(dtype)));
      std::vector<int> perm = tc.axes;
      std::string axes_text = "(";
      for (size_t i = 0; i < tc.axes.size(); ++i)
        axes_text += (i ? "," : "") + std::to_string(tc.axes[i]);
      axes_text += ")";
      if (perm.empty())
        for (int d = tc.shape.ndim() - 1; d >= 0; --d) perm.push_back(d);
      const op::AttrMap attrs = tc.axes.empty() ? op::AttrMap{} : op::AttrMap{{"axes", axes_text}};
      const NDArray in = random_array(tc.shape, dtype, rng);
      const NDArray want = op::invoke("transpose", {in}, attrs)[0];
      want.wait_to_read();
      const NDArray start = random_array(want.shape(), dtype, rng);
      expect_same_bits(transpose_host(in, perm, start, OpReq::kWrite), want);
      if (auto tiled = transpose_tiles_host(in, perm, start, OpReq::kWrite)) {
        ++tiled_cases;
        expect_same_bits(*tiled, want);
      }
      if (auto tiled = transpose_tiles_host(in, perm, start, OpReq::kAdd)) {
        NDArray want_add = copy_of(start);
        op::invoke_forward(op::OpInstance("transpose", attrs), {in}, {}, {want_add}, {OpReq::kAdd},
                           false);
        expect_same_bits(*tiled, want_add);
      }
      // kAdd: the start plus the transpose, added as the CPU adds.
      NDArray want_add = copy_of(start);
      op::invoke_forward(op::OpInstance("transpose", attrs), {in}, {}, {want_add}, {OpReq::kAdd},
                         false);
      expect_same_bits(transpose_host(in, perm, start, OpReq::kAdd), want_add);
      // Backward: the output gradient moved back by the inverse permutation.
      std::vector<int> inverse(perm.size());
      for (size_t i = 0; i < perm.size(); ++i)
        inverse[static_cast<size_t>(perm[i])] = static_cast<int>(i);
      const NDArray dy = random_array(want.shape(), dtype, rng);
      NDArray want_dx = zeros(tc.shape, dtype);
      op::invoke_backward(op::OpInstance("transpose", attrs), {dy}, {in}, {want}, {}, {want_dx},
                          {OpReq::kWrite});
      expect_same_bits(transpose_host(dy, inverse, zeros(tc.shape, dtype), OpReq::kWrite), want_dx);
    }
  }
  // Cases whose innermost axes differ (e.g. {3, 40, 35} with (0, 2, 1)) took
  // the tiled path: at least three shapes in each of the three dtypes.
  CHECK(tiled_cases >= 3 * 3);
}

namespace {

// Runs the GPU's block copy functor from `src` into a copy of `start`.
NDArray blocks_host(const NDArray& src, const NDArray& start, const kernels::RowBlocks& b,
                    OpReq req) {
  NDArray dst = copy_of(start);
  dispatch_dtype(src.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for_each_element_host(b.rows * b.len,
                          kernels::RowBlockCopy<T>{dst.data<T>(), src.data<T>(), b, req});
  });
  return dst;
}

// (outer, axis size, inner) of `shape` around `axis`.
struct Split {
  int64_t outer, size, inner;
};
Split split_at(const Shape& s, int axis) {
  return {s.prod(0, axis), s[axis], s.prod(axis + 1, s.ndim())};
}

}  // namespace

TEST_CASE("slice_axis: the GPU's block copies match the CPU operator, forward and backward") {
  struct Case {
    Shape shape;
    int axis;
    int64_t begin;
    std::optional<int64_t> end;
  };
  std::mt19937_64 rng(5);
  for (const Case& sc : {Case{{3, 5, 4}, 1, 1, 4}, Case{{3, 5, 4}, -1, -3, std::nullopt},
                         Case{{6, 2}, 0, 2, 5}, Case{{4}, 0, 0, 1}}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
      CAPTURE(sc.shape.to_string());
      CAPTURE(sc.axis);
      CAPTURE(std::string(dtype_name(dtype)));
      const op::AttrMap attrs = {{"axis", std::to_string(sc.axis)},
                                 {"begin", std::to_string(sc.begin)},
                                 {"end", sc.end ? std::to_string(*sc.end) : "None"}};
      const int axis = sc.axis < 0 ? sc.axis + sc.shape.ndim() : sc.axis;
      const Split s = split_at(sc.shape, axis);
      const int64_t begin = sc.begin < 0 ? sc.begin + s.size : sc.begin;
      const int64_t end = !sc.end ? s.size : *sc.end;
      const int64_t len = (end - begin) * s.inner;
      const NDArray in = random_array(sc.shape, dtype, rng);
      const NDArray want = op::invoke("slice_axis", {in}, attrs)[0];
      want.wait_to_read();
      const kernels::RowBlocks forward =
          kernels::part_to_dense(s.outer, s.size * s.inner, begin * s.inner, len);
      expect_same_bits(
          blocks_host(in, random_array(want.shape(), dtype, rng), forward, OpReq::kWrite), want);

      const NDArray dy = random_array(want.shape(), dtype, rng);
      const kernels::RowBlocks backward =
          kernels::dense_to_part(s.outer, s.size * s.inner, begin * s.inner, len);
      op::OpInstance inst("slice_axis", attrs);
      // kWrite: zeros outside the slice (the GPU clears the buffer first).
      NDArray want_dx = random_array(sc.shape, dtype, rng);
      op::invoke_backward(inst, {dy}, {in}, {want}, {}, {want_dx}, {OpReq::kWrite});
      expect_same_bits(blocks_host(dy, zeros(sc.shape, dtype), backward, OpReq::kWrite), want_dx);
      // kAdd: added inside the slice, untouched outside.
      const NDArray base = random_array(sc.shape, dtype, rng);
      NDArray want_add = copy_of(base);
      op::invoke_backward(inst, {dy}, {in}, {want}, {}, {want_add}, {OpReq::kAdd});
      expect_same_bits(blocks_host(dy, base, backward, OpReq::kAdd), want_add);
    }
  }
}

TEST_CASE("Concat and SliceChannel: the GPU's per-part copies match the CPU operators") {
  std::mt19937_64 rng(6);
  struct ConcatCase {
    std::vector<Shape> parts;
    int dim;
  };
  for (const ConcatCase& cc :
       {ConcatCase{{{2, 1, 3}, {2, 4, 3}, {2, 2, 3}}, 1}, ConcatCase{{{1, 2}, {3, 2}}, 0},
        ConcatCase{{{2, 2, 1}, {2, 2, 3}}, -1}}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kUint8}) {
      CAPTURE(cc.dim);
      CAPTURE(std::string(dtype_name(dtype)));
      const op::AttrMap attrs = {{"num_args", std::to_string(cc.parts.size())},
                                 {"dim", std::to_string(cc.dim)}};
      std::vector<NDArray> ins;
      for (const Shape& s : cc.parts) ins.push_back(random_array(s, dtype, rng, 0.0, 9.0));
      const NDArray want = op::invoke("Concat", ins, attrs)[0];
      want.wait_to_read();
      const int axis = cc.dim < 0 ? cc.dim + want.shape().ndim() : cc.dim;
      const Split o = split_at(want.shape(), axis);
      // Forward, with kAdd onto a start so that every part must land in place.
      const NDArray start = random_array(want.shape(), dtype, rng, 0.0, 9.0);
      NDArray want_add = copy_of(start);
      op::OpInstance inst("Concat", attrs);
      op::invoke_forward(inst, ins, {}, {want_add}, {OpReq::kAdd}, false);
      NDArray got = random_array(want.shape(), dtype, rng), got_add = copy_of(start);
      int64_t offset = 0;
      for (const NDArray& in : ins) {
        const int64_t len = in.shape()[axis] * o.inner;
        const kernels::RowBlocks b = kernels::dense_to_part(o.outer, o.size * o.inner, offset, len);
        got = blocks_host(in, got, b, OpReq::kWrite);
        got_add = blocks_host(in, got_add, b, OpReq::kAdd);
        offset += len;
      }
      expect_same_bits(got, want);
      expect_same_bits(got_add, want_add);
      // Backward: each input's gradient read from its part.
      const NDArray dy = random_array(want.shape(), dtype, rng, 0.0, 9.0);
      std::vector<NDArray> want_dx;
      for (const Shape& s : cc.parts) want_dx.push_back(zeros(s, dtype));
      op::invoke_backward(inst, {dy}, ins, {want}, {}, want_dx,
                          std::vector<OpReq>(ins.size(), OpReq::kWrite));
      offset = 0;
      for (size_t k = 0; k < ins.size(); ++k) {
        const int64_t len = cc.parts[k][axis] * o.inner;
        expect_same_bits(blocks_host(dy, random_array(cc.parts[k], dtype, rng),
                                     kernels::part_to_dense(o.outer, o.size * o.inner, offset, len),
                                     OpReq::kWrite),
                         want_dx[k]);
        offset += len;
      }
    }
  }

  struct SplitCase {
    Shape shape;
    int num_outputs, axis;
    bool squeeze;
  };
  for (const SplitCase& sc : {SplitCase{{2, 6, 3}, 3, 1, false}, SplitCase{{2, 3, 4}, 3, 1, true},
                              SplitCase{{4, 2}, 2, 0, false}, SplitCase{{2, 4}, 2, -1, false}}) {
    CAPTURE(sc.shape.to_string());
    CAPTURE(sc.axis);
    const DType dtype = DType::kFloat32;
    const op::AttrMap attrs = {{"num_outputs", std::to_string(sc.num_outputs)},
                               {"axis", std::to_string(sc.axis)},
                               {"squeeze_axis", sc.squeeze ? "True" : "False"}};
    const NDArray in = random_array(sc.shape, dtype, rng);
    const std::vector<NDArray> want = op::invoke("SliceChannel", {in}, attrs);
    const Split s = split_at(sc.shape, sc.axis < 0 ? sc.axis + sc.shape.ndim() : sc.axis);
    const int64_t len = s.size / sc.num_outputs * s.inner;
    std::vector<NDArray> dys;
    NDArray got_dx = nans(sc.shape, dtype);
    for (int k = 0; k < sc.num_outputs; ++k) {
      want[static_cast<size_t>(k)].wait_to_read();
      const Shape& part = want[static_cast<size_t>(k)].shape();
      // The GPU writes each output's dense block (its shape is the output's).
      const NDArray got = blocks_host(
          in, random_array(part, dtype, rng),
          kernels::part_to_dense(s.outer, s.size * s.inner, k * len, len), OpReq::kWrite);
      expect_same_bits(got, want[static_cast<size_t>(k)]);
      dys.push_back(random_array(part, dtype, rng));
      got_dx = blocks_host(dys.back(), got_dx,
                           kernels::dense_to_part(s.outer, s.size * s.inner, k * len, len),
                           OpReq::kWrite);
    }
    NDArray want_dx = zeros(sc.shape, dtype);
    op::invoke_backward(op::OpInstance("SliceChannel", attrs), dys, {in}, want, {}, {want_dx},
                        {OpReq::kWrite});
    expect_same_bits(got_dx, want_dx);
  }
}

TEST_CASE("Embedding: the GPU's gather and scatter-add match the CPU operator") {
  std::mt19937_64 rng(7);
  // Clipped (negative, beyond the last row), truncated (2.7) and repeated indices.
  const std::vector<double> index_values = {0, 4, 2.7, -1, 7, 1, 4, 4};
  for (DType index_type : {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kUint8}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      CAPTURE(std::string(dtype_name(index_type)));
      CAPTURE(std::string(dtype_name(dtype)));
      const int64_t rows = 5, dim = 3;
      const op::AttrMap attrs = {{"input_dim", std::to_string(rows)},
                                 {"output_dim", std::to_string(dim)},
                                 {"dtype", dtype_name(dtype)}};
      const NDArray idx = from_doubles({2, 4}, index_values, index_type);
      const NDArray weight = random_array({rows, dim}, dtype, rng);
      const NDArray want = op::invoke("Embedding", {idx, weight}, attrs)[0];
      want.wait_to_read();
      const NDArray dy = random_array(want.shape(), dtype, rng);
      const NDArray base = random_array({rows, dim}, dtype, rng);
      NDArray want_dw = copy_of(base);
      op::invoke_backward(op::OpInstance("Embedding", attrs), {dy}, {idx, weight}, {want}, {},
                          {zeros(idx.shape(), index_type), want_dw}, {OpReq::kNull, OpReq::kAdd});
      want_dw.wait_to_read();
      dispatch_dtype(dtype, [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>) {
          dispatch_dtype(index_type, [&](auto itag) {
            using I = typename decltype(itag)::type;
            if constexpr (!std::is_same_v<I, half_t>) {
              NDArray got = nans(want.shape(), dtype);
              for_each_element_host(idx.size() * dim, kernels::EmbeddingGather<T, I>{
                                                          got.data<T>(), weight.data<T>(),
                                                          idx.data<I>(), rows, dim, OpReq::kWrite});
              expect_same_bits(got, want);
              NDArray got_dw = copy_of(base);
              for_each_element_host(idx.size() * dim,
                                    kernels::EmbeddingScatterAdd<T, I>{
                                        got_dw.data<T>(), dy.data<T>(), idx.data<I>(), rows, dim});
              expect_close(got_dw, want_dw, 1e-6);
            }
          });
        }
      });
    }
  }
}

TEST_CASE("one_hot: the GPU's functor matches the CPU operator for every index and output type") {
  const std::vector<double> index_values = {0, 2.9, -1, 3, 5, -0.5, 1, 2};
  for (DType index_type : kAllTypes) {
    for (DType out_type : {DType::kFloat32, DType::kFloat16, DType::kInt8, DType::kInt64}) {
      CAPTURE(std::string(dtype_name(index_type)));
      CAPTURE(std::string(dtype_name(out_type)));
      const int64_t depth = 4;
      const double on = 2.5, off = -1.0;
      const op::AttrMap attrs = {{"depth", std::to_string(depth)},
                                 {"on_value", "2.5"},
                                 {"off_value", "-1"},
                                 {"dtype", dtype_name(out_type)}};
      const NDArray idx = from_doubles({2, 4}, index_values, index_type);
      const NDArray want = op::invoke("one_hot", {idx}, attrs)[0];
      want.wait_to_read();
      NDArray got = zeros(want.shape(), out_type);
      dispatch_dtype(index_type, [&](auto itag) {
        using I = typename decltype(itag)::type;
        dispatch_dtype(out_type, [&](auto otag) {
          using T = typename decltype(otag)::type;
          // on/off converted as the GPU entry point converts them.
          T on_v, off_v;
          if constexpr (std::is_same_v<T, half_t>) {
            on_v = half_t(static_cast<float>(on));
            off_v = half_t(static_cast<float>(off));
          } else {
            on_v = static_cast<T>(on);
            off_v = static_cast<T>(off);
          }
          for_each_element_host(
              want.size(), kernels::OneHot<T, I>{got.data<T>(), idx.data<I>(), depth, on_v, off_v,
                                                 OpReq::kWrite});
        });
      });
      expect_same_bits(got, want);
    }
  }
}

TEST_CASE("Cast: the GPU's functor converts every type pair as the CPU operator") {
  // Fractions, negatives (wrapping into unsigned types), values beyond
  // float16 and int32, NaN and infinity.
  const std::vector<double> values = {-1.7,
                                      0.5,
                                      2.5,
                                      300.0,
                                      -70000.0,
                                      1e10,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity()};
  for (DType from : kAllTypes) {
    const NDArray src = from_doubles({8}, values, from);
    for (DType to : kAllTypes) {
      CAPTURE(std::string(dtype_name(from)));
      CAPTURE(std::string(dtype_name(to)));
      const NDArray want = op::invoke("Cast", {src}, {{"dtype", dtype_name(to)}})[0];
      want.wait_to_read();
      NDArray got = zeros(src.shape(), to);
      dispatch_dtype(from, [&](auto ftag) {
        using F = typename decltype(ftag)::type;
        dispatch_dtype(to, [&](auto ttag) {
          using T = typename decltype(ttag)::type;
          for_each_element_host(
              src.size(), kernels::CastValues<T, F>{got.data<T>(), src.data<F>(), OpReq::kWrite});
        });
      });
      expect_same_bits(got, want);
    }
  }
  // The values themselves: wrapping through int64, NaN to 0, overflow to inf.
  CHECK(kernels::convert_value<uint8_t>(-1.7f) == 255);
  CHECK(kernels::convert_value<int32_t>(std::nanf("")) == 0);
  CHECK(std::isinf(static_cast<float>(kernels::convert_value<half_t>(70000.0))));
  CHECK(kernels::convert_value<int8_t>(half_t(3.75f)) == 3);
}
