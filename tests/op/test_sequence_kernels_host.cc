// The GPU kernels of the sequence-model operators, run on the CPU: LayerNorm's
// per-(row, thread) functions over every row with the GPU's thread counts
// (the block sums emulated thread by thread) and its chunked parameter
// gradients; the element functors of SequenceMask/Last/Reverse and
// _contrib_div_sqrt_dim over their index spaces, for every dtype; and the
// interleaved attention plans as cuBLAS runs them (the row-major products
// mapped to column-major strided-batched calls, through a column-major
// reference GEMM). Each is compared with the CPU operator through op::invoke.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "op/cuda/gemm_args.h"
#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/nn/attention_kernels.h"
#include "op/nn/attention_products.h"
#include "op/nn/layer_norm_kernels.h"
#include "op/nn/sequence_kernels.h"
#include "op_harness.h"

using namespace mx;
using op::AttrMap;
using op::for_each_element_host;
using op::OpInstance;
using op::OpReq;

namespace {

constexpr int64_t kGpuThreads = 256;
constexpr int64_t kOddThreads = 7;

template <typename T>
std::vector<T> random_values(int64_t n, uint64_t seed, double low = -2, double high = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <typename T>
NDArray array(const Shape& s, const std::vector<T>& v) {
  return NDArray::from_vector<T>(s, v);
}

template <typename T>
void check_close(const std::vector<T>& got, const NDArray& want, const std::string& what,
                 double tol) {
  INFO(what);
  const std::vector<T> w = want.to_vector<T>();
  REQUIRE(got.size() == w.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = static_cast<double>(got[i]), e = static_cast<double>(w[i]);
    if (!(std::abs(g - e) <= tol + tol * std::abs(e))) ++bad;
  }
  CHECK(bad == 0);
}

// LayerNorm's kernels as the GPU runs them: one block of `threads` per row.
template <typename T>
void run_layer_norm_forward(const op::LayerNormForwardRow<T>& f, int64_t threads) {
  for (int64_t row = 0; row < f.view.rows(); ++row) {
    double sum = 0, sq = 0;
    for (int64_t t = 0; t < threads; ++t) {
      double a, b;
      f.partial(row, t, threads, a, b);
      sum += a;
      sq += b;
    }
    const op::LayerNormStats s = f.stats(row, sum, sq);
    f.finish(row, s);
    for (int64_t t = 0; t < threads; ++t) f.apply(row, s, t, threads);
  }
}

template <typename T>
void run_layer_norm_data_grad(const op::LayerNormBackwardRow<T>& f, int64_t threads) {
  for (int64_t row = 0; row < f.view.rows(); ++row) {
    double sum_g = 0, sum_gx = 0;
    for (int64_t t = 0; t < threads; ++t) {
      double a, b;
      f.partial(row, t, threads, a, b);
      sum_g += a;
      sum_gx += b;
    }
    for (int64_t t = 0; t < threads; ++t) f.apply(row, sum_g, sum_gx, t, threads);
  }
}

struct LayerNormCase {
  Shape shape;
  int axis;
};

}  // namespace

TEST_CASE_TEMPLATE("LayerNorm's per-(row, thread) kernels equal the CPU operator", T, float,
                   double) {
  const LayerNormCase cases[] = {
      {{4, 300}, -1},  // rows longer than a block
      {{3, 2, 8}, -1}, {{2, 5, 3}, 1}, {{4, 3}, 0},
      {{150, 3}, 1},   {{130, 3}, -1},  // three chunks of the parameter gradients
  };
  uint64_t seed = 40;
  for (const LayerNormCase& lc : cases) {
    for (int64_t threads : {kGpuThreads, kOddThreads}) {
      INFO("shape ", lc.shape.to_string(), " axis ", lc.axis, " threads ", threads);
      const Shape& s = lc.shape;
      const int axis = lc.axis < 0 ? lc.axis + s.ndim() : lc.axis;
      const op::LayerNormView view{s.prod(0, axis), s[axis], s.prod(axis + 1, s.ndim())};
      const Shape cs{view.channels}, stats_shape{view.rows()};
      const auto x = random_values<T>(s.size(), ++seed, -2, 3);
      const auto gamma = random_values<T>(view.channels, ++seed, 0.5, 1.5);
      const auto beta = random_values<T>(view.channels, ++seed);
      OpInstance op("LayerNorm", {{"axis", std::to_string(lc.axis)}, {"eps", "0.01"}});
      NDArray xa = array(s, x), ga = array(cs, gamma), ba = array(cs, beta);
      auto out = op::invoke(op, {xa, ga, ba});

      std::vector<T> y(x.size()), mean(static_cast<size_t>(view.rows())), std_out(mean.size());
      run_layer_norm_forward(
          op::LayerNormForwardRow<T>{view, x.data(), gamma.data(), beta.data(), y.data(),
                                     mean.data(), std_out.data(), OpReq::kWrite, OpReq::kWrite,
                                     OpReq::kWrite, static_cast<double>(0.01f)},
          threads);
      const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
      check_close(y, out[0], "output", tol);
      check_close(mean, out[1], "mean", tol);
      check_close(std_out, out[2], "std", tol);

      // Backward from the CPU's saved statistics: data gradient written,
      // parameter gradients added.
      const auto dy = random_values<T>(s.size(), ++seed);
      const auto prior = random_values<T>(view.channels, ++seed);
      NDArray dxa = NDArray::zeros(s, Context::cpu(), dtype_of<T>);
      NDArray dga = array(cs, prior), dba = array(cs, prior);
      op::invoke_backward(op, {array(s, dy)}, {xa, ga, ba}, out, {}, {dxa, dga, dba},
                          {OpReq::kWrite, OpReq::kAdd, OpReq::kAdd});
      const auto saved_mean = out[1].to_vector<T>(), saved_std = out[2].to_vector<T>();
      std::vector<T> dx(x.size());
      run_layer_norm_data_grad(
          op::LayerNormBackwardRow<T>{view, x.data(), gamma.data(), dy.data(), saved_mean.data(),
                                      saved_std.data(), dx.data(), OpReq::kWrite},
          threads);
      check_close(dx, dxa, "data gradient", std::is_same_v<T, float> ? 1e-4 : 1e-11);

      std::vector<T> dgamma = prior, dbeta = prior;
      const op::LayerNormParamGrad<T> pg0{
          view,          x.data(),     dy.data(),   saved_mean.data(), saved_std.data(),
          dgamma.data(), dbeta.data(), OpReq::kAdd, OpReq::kAdd,       64,
          nullptr,       nullptr};
      std::vector<double> partial(static_cast<size_t>(2 * pg0.chunks() * view.channels));
      op::LayerNormParamGrad<T> pg = pg0;
      pg.partial_gamma = partial.data();
      pg.partial_beta = partial.data() + partial.size() / 2;
      for_each_element_host(pg.chunks() * view.channels, [&](int64_t i) { pg.sum_chunk(i); });
      for_each_element_host(view.channels, [&](int64_t c) { pg.finish(c); });
      check_close(dgamma, dga, "gamma gradient", tol * 10);
      check_close(dbeta, dba, "beta gradient", tol * 10);
    }
  }
}

TEST_CASE("half_bits_to_float reads every float16 the CPU's half_t does") {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float want = static_cast<float>(half_t::from_bits(static_cast<uint16_t>(bits)));
    const float got = op::half_bits_to_float(static_cast<uint16_t>(bits));
    if (std::isnan(want)) {
      REQUIRE(std::isnan(got));
    } else {
      INFO("bits ", bits);
      REQUIRE(got == want);
      REQUIRE(std::signbit(got) == std::signbit(want));
    }
  }
}

TEST_CASE_TEMPLATE("Sequence functors equal the CPU operators", T, float, double, half_t, int32_t) {
  struct Case {
    Shape shape;
    int axis;
    std::vector<double> lengths;  // empty: no lengths
    DType length_type;
  };
  const Case cases[] = {
      {{4, 3, 2}, 0, {1, 4, 0}, DType::kFloat32}, {{3, 4, 2, 2}, 1, {2, 9, 3}, DType::kInt32},
      {{5, 2}, 0, {2.7, 5}, DType::kFloat16},     {{3, 2, 2}, 0, {}, DType::kFloat32},
      {{2, 5, 3}, 1, {-1, 4}, DType::kInt64},
  };
  uint64_t seed = 70;
  for (const Case& sc : cases) {
    INFO("shape ", sc.shape.to_string(), " axis ", sc.axis, " lengths ", sc.lengths.size());
    const Shape& s = sc.shape;
    const op::SequenceView view{s[0], s[1], s.prod(2, s.ndim()), sc.axis};
    const bool with_length = !sc.lengths.empty();
    NDArray len;
    if (with_length) {
      NDArray d = NDArray::from_vector<double>({view.batch()}, sc.lengths);
      len = op::invoke("Cast", {d}, {{"dtype", dtype_name(sc.length_type)}})[0];
      len.wait_to_read();
    }
    const op::SequenceLengths lengths =
        with_length ? op::SequenceLengths{len.raw_data(), len.dtype()} : op::SequenceLengths{};
    std::vector<double> xd = random_values<double>(s.size(), ++seed, -5, 5);
    NDArray xa = op::invoke("Cast", {array(s, xd)}, {{"dtype", dtype_name(dtype_of<T>)}})[0];
    const std::vector<T> x = xa.to_vector<T>();
    std::vector<NDArray> inputs{xa};
    if (with_length) inputs.push_back(len);
    AttrMap attrs{{"axis", std::to_string(sc.axis)}};
    if (with_length) attrs["use_sequence_length"] = "True";

    // SequenceMask with a value, forward; its gradient is the same functor with 0.
    AttrMap mask_attrs = attrs;
    mask_attrs["value"] = "-3";
    const auto mask = op::invoke("SequenceMask", inputs, mask_attrs)[0].to_vector<T>();
    std::vector<T> y(x.size());
    for_each_element_host(
        view.size(),
        op::SequenceMaskElements<T>{view, x.data(), y.data(), lengths, T(-3.0f), OpReq::kWrite});
    CHECK(y == mask);

    // SequenceLast forward and gradient.
    OpInstance last("SequenceLast", attrs);
    auto last_out = op::invoke(last, inputs);
    std::vector<T> yl(static_cast<size_t>(view.batch() * view.rest));
    for_each_element_host(
        static_cast<int64_t>(yl.size()),
        op::SequenceLastElements<T>{view, x.data(), yl.data(), lengths, OpReq::kWrite});
    CHECK(yl == last_out[0].to_vector<T>());
    std::vector<NDArray> grads{NDArray::zeros(s, Context::cpu(), dtype_of<T>)};
    std::vector<OpReq> req{OpReq::kWrite};
    if (with_length) {
      grads.emplace_back();
      req.push_back(OpReq::kNull);
    }
    op::invoke_backward(last, {last_out[0]}, inputs, last_out, {}, grads, req);
    std::vector<T> dx(x.size());
    for_each_element_host(view.size(), op::SequenceLastGradElements<T>{view, yl.data(), dx.data(),
                                                                       lengths, OpReq::kWrite});
    CHECK(dx == grads[0].to_vector<T>());

    // SequenceReverse (axis 0 only).
    if (sc.axis == 0) {
      const auto rev = op::invoke("SequenceReverse", inputs, attrs)[0].to_vector<T>();
      std::vector<T> yr(x.size());
      for_each_element_host(view.size(), op::SequenceReverseElements<T>{view, x.data(), yr.data(),
                                                                        lengths, OpReq::kWrite});
      CHECK(yr == rev);
    }
  }
}

TEST_CASE("div_sqrt_dim's functor equals the CPU operator") {
  const Shape s{3, 2, 9};
  const auto x = random_values<float>(s.size(), 90);
  const auto want = op::invoke("_contrib_div_sqrt_dim", {array(s, x)})[0];
  std::vector<float> y(x.size());
  for_each_element_host(s.size(),
                        op::ScaleElements<float>{x.data(), y.data(), 1.0f / 3.0f, OpReq::kWrite});
  check_close(y, want, "output", 0);
}

namespace {

// cuBLAS's gemm on the host: column-major, C = alpha op(A) op(B) + beta C,
// C not read when beta is 0.
void column_major_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                       const double* a, int64_t lda, const double* b, int64_t ldb, double beta,
                       double* c, int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (ta ? a[p + i * lda] : a[i + p * lda]) * (tb ? b[j + p * ldb] : b[p + j * ldb]);
      double& out = c[i + j * ldc];
      out = beta == 0 ? alpha * sum : alpha * sum + beta * out;
    }
}

// One product of a plan as op/cuda/cublas_gemm.cc asks cuBLAS for it.
void product_as_cublas(const op::AttentionProduct& p, const double* a, const double* b, double* c,
                       OpReq req) {
  if (req == OpReq::kNull) return;
  const op::cuda::ColumnMajorGemm cm = op::cuda::to_column_major(p.gemm);
  for (int64_t i = 0; i < p.strides.batch; ++i)
    column_major_gemm(cm.trans_first, cm.trans_second, cm.m, cm.n, cm.k, p.alpha,
                      b + i * p.strides.b, cm.ld_first, a + i * p.strides.a, cm.ld_second,
                      req == OpReq::kAdd ? 1.0 : 0.0, c + i * p.strides.c, cm.ldc);
}

struct AttentionCase {
  const char* op;
  op::AttentionKind kind;
  int heads;
  Shape in0, in1;  // in1 empty for selfatt_qk
};

}  // namespace

TEST_CASE("interleaved attention plans run as cuBLAS calls equal the CPU operators") {
  const AttentionCase cases[] = {
      {"_contrib_interleaved_matmul_selfatt_qk", op::AttentionKind::kSelfQK, 3, {4, 2, 18}, {}},
      {"_contrib_interleaved_matmul_selfatt_valatt",
       op::AttentionKind::kSelfValAtt,
       2,
       {3, 2, 12},
       {4, 3, 3}},
      {"_contrib_interleaved_matmul_encdec_qk",
       op::AttentionKind::kEncDecQK,
       2,
       {3, 2, 8},
       {5, 2, 16}},
      {"_contrib_interleaved_matmul_encdec_valatt",
       op::AttentionKind::kEncDecValAtt,
       2,
       {5, 2, 16},
       {4, 3, 5}},
  };
  uint64_t seed = 100;
  for (const AttentionCase& ac : cases) {
    INFO(ac.op);
    const bool two = ac.in1.ndim() > 0;
    std::vector<std::vector<double>> in{random_values<double>(ac.in0.size(), ++seed)};
    std::vector<NDArray> inputs{array(ac.in0, in[0])};
    if (two) {
      in.push_back(random_values<double>(ac.in1.size(), ++seed));
      inputs.push_back(array(ac.in1, in[1]));
    }
    OpInstance op(ac.op, {{"heads", std::to_string(ac.heads)}});
    auto out = op::invoke(op, inputs);
    const op::AttentionDims dims =
        op::attention_dims(ac.kind, ac.heads, ac.in0, two ? ac.in1 : ac.in0);
    std::vector<double> y(static_cast<size_t>(out[0].size()), std::nan(""));
    auto read = [&](const op::AttentionOperand& o, const std::vector<double>& dy) -> const double* {
      switch (o.array) {
        case op::AttentionArray::kIn0: return in[0].data() + o.offset;
        case op::AttentionArray::kIn1: return in[1].data() + o.offset;
        default: return dy.data() + o.offset;
      }
    };
    const op::AttentionPlan fwd = op::attention_forward_plan(ac.kind, dims);
    for (int i = 0; i < fwd.count; ++i) {
      const op::AttentionProduct& p = fwd.products[static_cast<size_t>(i)];
      product_as_cublas(p, read(p.a, {}), read(p.b, {}), y.data(), OpReq::kWrite);
    }
    check_close(y, out[0], "output", 1e-12);

    // Gradients written over NaN, with the zero slots as the GPU fills them.
    const auto dy = random_values<double>(out[0].size(), ++seed);
    std::vector<NDArray> grads;
    std::vector<OpReq> req;
    std::vector<std::vector<double>> g;
    for (size_t i = 0; i < in.size(); ++i) {
      grads.push_back(NDArray::zeros(inputs[i].shape(), Context::cpu(), DType::kFloat64));
      req.push_back(OpReq::kWrite);
      g.emplace_back(in[i].size(), std::nan(""));
    }
    op::invoke_backward(op, {array(out[0].shape(), dy)}, inputs, out, {}, grads, req);
    const op::AttentionPlan bwd = op::attention_backward_plan(ac.kind, dims, OpReq::kWrite,
                                                              two ? OpReq::kWrite : OpReq::kNull);
    REQUIRE(bwd.zero);
    const op::AttentionZeroSlots& z = bwd.zero_slots;
    for (int64_t r = 0; r < z.rows; ++r)
      for (int64_t k = 0; k < z.width; ++k)
        g[static_cast<size_t>(z.grad)][static_cast<size_t>(r * z.pitch + z.offset + k)] = 0;
    for (int i = 0; i < bwd.count; ++i) {
      const op::AttentionProduct& p = bwd.products[static_cast<size_t>(i)];
      const int grad = p.c.array == op::AttentionArray::kGrad1 ? 1 : 0;
      product_as_cublas(p, read(p.a, dy), read(p.b, dy),
                        g[static_cast<size_t>(grad)].data() + p.c.offset, OpReq::kWrite);
    }
    for (size_t i = 0; i < g.size(); ++i) check_close(g[i], grads[i], "gradient", 1e-12);
  }
}
