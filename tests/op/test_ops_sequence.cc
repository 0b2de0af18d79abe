// The sequence-model operator family: LayerNorm, the interleaved attention
// products, _contrib_div_sqrt_dim, SequenceMask/Last/Reverse, and softmax
// with lengths and GELU as a BERT-style encoder uses them. Finite-difference
// gradients, MXNet 1.9.1 reference values (tests/fixtures/ops/sequence.*),
// shape inference and its messages, and what the fixtures cannot show (the
// hidden statistics, clamped lengths, the one-pass statistics' precision).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "base/error.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::OpInstance;
using op::OpReq;
using op::ShapeVector;

namespace {

NDArray random_array(const Shape& shape, uint64_t seed, double low = -1, double high = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  std::vector<double> v(static_cast<size_t>(shape.size()));
  for (auto& x : v) x = u(rng);
  return NDArray::from_vector<double>(shape, v);
}

// Output shapes of `op` from the given input shapes (which inference fills).
ShapeVector infer(const std::string& op, const AttrMap& attrs, ShapeVector& in,
                  ShapeVector out = {}) {
  OpInstance inst(op, attrs, op + " 'layer'");
  ShapeVector aux;
  if (out.empty()) out.resize(inst.output_names().size());
  inst.infer_shape(in, aux, out);
  return out;
}

// Lengths as an integer input in [0, steps] whose gradient is not checked.
GradientCheckOptions with_lengths(int64_t steps) {
  GradientCheckOptions o;
  o.integer_inputs = {1};
  o.skip_inputs = {1};
  o.integer_range = static_cast<int>(steps + 1);
  return o;
}

}  // namespace

// ---------------------------------------------------------------- gradients

TEST_CASE("gradients: LayerNorm along the last, middle and first axes") {
  check_gradient("LayerNorm", {}, {Shape{3, 8}, Shape{8}, Shape{8}});
  // 21 = two blocks of eight lanes and a remainder.
  check_gradient("LayerNorm", {{"eps", "0.01"}}, {Shape{2, 2, 21}, Shape{21}, Shape{21}});
  check_gradient("LayerNorm", {{"axis", "1"}}, {Shape{2, 5, 3}, Shape{5}, Shape{5}});
  check_gradient("LayerNorm", {{"axis", "0"}}, {Shape{4, 3}, Shape{4}, Shape{4}});
  check_gradient("LayerNorm", {{"axis", "-2"}}, {Shape{3, 4, 2}, Shape{4}, Shape{4}});
  // More rows than one chunk of the gamma and beta gradients.
  check_gradient("LayerNorm", {}, {Shape{150, 3}, Shape{3}, Shape{3}});
}

TEST_CASE("gradients: interleaved attention products and div_sqrt_dim") {
  check_gradient("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}}, {Shape{3, 2, 12}});
  check_gradient("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "1"}}, {Shape{4, 1, 9}});
  check_gradient("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}},
                 {Shape{3, 2, 12}, Shape{4, 3, 3}});
  check_gradient("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "1"}},
                 {Shape{2, 1, 6}, Shape{1, 2, 2}});
  check_gradient("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}},
                 {Shape{3, 2, 4}, Shape{5, 2, 8}});
  check_gradient("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}},
                 {Shape{5, 2, 8}, Shape{4, 3, 5}});
  check_gradient("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "3"}},
                 {Shape{2, 1, 6}, Shape{3, 4, 2}});
  check_gradient("_contrib_div_sqrt_dim", {}, {Shape{2, 3, 7}});
}

TEST_CASE("gradients: SequenceMask, SequenceLast, SequenceReverse") {
  check_gradient("SequenceMask", {{"use_sequence_length", "True"}, {"value", "-2"}},
                 {Shape{4, 3, 2}, Shape{3}}, with_lengths(4));
  check_gradient("SequenceMask", {{"use_sequence_length", "True"}, {"axis", "1"}},
                 {Shape{3, 4, 2, 2}, Shape{3}}, with_lengths(4));
  check_gradient("SequenceMask", {}, {Shape{3, 2}});
  check_gradient("SequenceLast", {{"use_sequence_length", "True"}}, {Shape{4, 3, 2}, Shape{3}},
                 with_lengths(4));
  check_gradient("SequenceLast", {{"use_sequence_length", "True"}, {"axis", "1"}},
                 {Shape{3, 5, 2}, Shape{3}}, with_lengths(5));
  check_gradient("SequenceLast", {}, {Shape{3, 2, 2}});
  check_gradient("SequenceLast", {{"axis", "1"}}, {Shape{2, 3}});
  check_gradient("SequenceReverse", {{"use_sequence_length", "True"}}, {Shape{5, 3, 2}, Shape{3}},
                 with_lengths(5));
  check_gradient("SequenceReverse", {}, {Shape{3, 2, 2, 2}});
}

// ---------------------------------------------------------------- reference

TEST_CASE("reference: sequence operators against MXNet 1.9.1") {
  auto cases = load_reference_cases("sequence");
  CHECK(cases.size() >= 35);
  int with_length_grad = 0;
  for (const auto& c : cases) {
    INFO("case ", c.id);
    if (c.in_grads.size() > 1 && !c.in_grads[1].is_none() && c.op.rfind("Sequence", 0) == 0)
      ++with_length_grad;
    // MXNet sums LayerNorm's statistics in float32: for rows around 1000 with
    // a spread of 0.5 its output is 5e-4 and its data gradient 2.6e-3 off the
    // float64 values ("LayerNorm float32: statistics stay exact" checks mx's).
    if (c.id == "ln_offset")
      check_reference(c, 1e-3, 5e-3);
    else
      check_reference(c, 1e-4, 1e-5);
  }
  // The lengths' zero gradient is written (their buffers start as NaN).
  CHECK(with_length_grad >= 8);
}

// ---------------------------------------------------------------- properties

TEST_CASE("LayerNorm: mean and std outputs, visible only with output_mean_var") {
  CHECK(OpInstance("LayerNorm", {}).num_visible_outputs() == 1);
  CHECK(OpInstance("LayerNorm", {{"output_mean_var", "True"}}).num_visible_outputs() == 3);
  CHECK(OpInstance("LayerNorm", {}).output_names() ==
        std::vector<std::string>{"output", "mean", "std"});
  CHECK(OpInstance("LayerNorm", {}).attrs().at("eps") == "1e-05");
  const Shape s{2, 3, 4};
  NDArray x = random_array(s, 1), g = random_array({3}, 2, 0.5, 1.5), b = random_array({3}, 3);
  auto out = op::invoke("LayerNorm", {x, g, b}, {{"axis", "1"}, {"eps", "0.25"}});
  REQUIRE(out.size() == 3);
  CHECK(out[1].shape() == Shape{2, 1, 4});
  CHECK(out[2].shape() == Shape{2, 1, 4});
  const auto xv = x.to_vector<double>(), mean = out[1].to_vector<double>(),
             std_out = out[2].to_vector<double>(), y = out[0].to_vector<double>(),
             gv = g.to_vector<double>(), bv = b.to_vector<double>();
  for (int64_t o = 0; o < 2; ++o)
    for (int64_t j = 0; j < 4; ++j) {
      double m = 0, v = 0;
      for (int64_t k = 0; k < 3; ++k) m += xv[static_cast<size_t>((o * 3 + k) * 4 + j)] / 3;
      for (int64_t k = 0; k < 3; ++k) {
        const double d = xv[static_cast<size_t>((o * 3 + k) * 4 + j)] - m;
        v += d * d / 3;
      }
      const auto row = static_cast<size_t>(o * 4 + j);
      CHECK(mean[row] == doctest::Approx(m).epsilon(1e-12));
      CHECK(std_out[row] == doctest::Approx(std::sqrt(v + 0.25)).epsilon(1e-12));
      for (int64_t k = 0; k < 3; ++k) {
        const auto i = static_cast<size_t>((o * 3 + k) * 4 + j);
        CHECK(y[i] ==
              doctest::Approx((xv[i] - m) / std::sqrt(v + 0.25) * gv[k] + bv[k]).epsilon(1e-12));
      }
    }
}

TEST_CASE("LayerNorm: no gradient flows back through the mean and std outputs, as in MXNet") {
  const Shape s{3, 5};
  NDArray x = random_array(s, 4), g = random_array({5}, 5), b = random_array({5}, 6);
  OpInstance plain("LayerNorm", {}), with_stats("LayerNorm", {{"output_mean_var", "True"}});
  auto outs = op::invoke(with_stats, {x, g, b});
  NDArray dy = random_array(s, 7);
  auto backward = [&](const OpInstance& op, const std::vector<NDArray>& out_grads) {
    std::vector<NDArray> grads{NDArray::zeros(s, Context::cpu(), DType::kFloat64),
                               NDArray::zeros({5}, Context::cpu(), DType::kFloat64),
                               NDArray::zeros({5}, Context::cpu(), DType::kFloat64)};
    op::invoke_backward(op, out_grads, {x, g, b}, outs, {}, grads,
                        {OpReq::kWrite, OpReq::kWrite, OpReq::kWrite});
    return grads;
  };
  auto a = backward(plain, {dy});
  auto c = backward(with_stats, {dy, random_array({3, 1}, 8), random_array({3, 1}, 9)});
  for (size_t i = 0; i < 3; ++i) CHECK(a[i].to_vector<double>() == c[i].to_vector<double>());
}

TEST_CASE("LayerNorm float32: statistics stay exact for a mean large against the spread") {
  // Rows around 10^4 with a spread of 10^-2: a one-pass variance without the
  // shift loses about three digits to cancellation even in float64.
  const int64_t rows = 4, n = 1000;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> u(-0.01f, 0.01f);
  std::vector<float> x(static_cast<size_t>(rows * n));
  for (auto& v : x) v = 10000.0f + u(rng);
  NDArray xa = NDArray::from_vector<float>({rows, n}, x);
  auto out = op::invoke("LayerNorm",
                        {xa, NDArray::full({n}, 1.0, Context::cpu(), DType::kFloat32),
                         NDArray::zeros({n}, Context::cpu(), DType::kFloat32)},
                        {{"eps", "0"}});
  const auto std_out = out[2].to_vector<float>();
  for (int64_t r = 0; r < rows; ++r) {
    double m = 0, v = 0;
    for (int64_t k = 0; k < n; ++k) m += x[static_cast<size_t>(r * n + k)];
    m /= static_cast<double>(n);
    for (int64_t k = 0; k < n; ++k) {
      const double d = x[static_cast<size_t>(r * n + k)] - m;
      v += d * d;
    }
    CHECK(std_out[static_cast<size_t>(r)] ==
          doctest::Approx(std::sqrt(v / static_cast<double>(n))).epsilon(1e-6));
  }
}

TEST_CASE("Sequence operators clamp lengths to [0, steps]") {
  // (steps 3, batch 4, 1): step t of entry b holds 10 t + b.
  std::vector<double> v;
  for (int t = 0; t < 3; ++t)
    for (int b = 0; b < 4; ++b) v.push_back(10.0 * t + b);
  NDArray x = NDArray::from_vector<double>({3, 4, 1}, v);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  NDArray len = NDArray::from_vector<double>({4}, {0, 9, -2, nan});
  const AttrMap use{{"use_sequence_length", "True"}};
  auto last = op::invoke("SequenceLast", {x, len}, use)[0].to_vector<double>();
  CHECK(last == std::vector<double>{0, 21, 0, 0});
  auto mask =
      op::invoke("SequenceMask", {x, len}, {{"use_sequence_length", "True"}, {"value", "-1"}})[0]
          .to_vector<double>();
  CHECK(mask == std::vector<double>{-1, 1, -1, -1, -1, 11, -1, -1, -1, 21, -1, -1});
  auto rev = op::invoke("SequenceReverse", {x, len}, use)[0].to_vector<double>();
  CHECK(rev == std::vector<double>{0, 21, 2, 3, 10, 11, 12, 13, 20, 1, 22, 23});
  // An empty sequence's last step gets no gradient; the lengths get 0.
  OpInstance op("SequenceLast", use);
  auto outs = op::invoke(op, {x, len});
  std::vector<NDArray> grads{NDArray::full({3, 4, 1}, 5.0, Context::cpu(), DType::kFloat64),
                             NDArray::full({4}, 5.0, Context::cpu(), DType::kFloat64)};
  op::invoke_backward(op, {NDArray::full({4, 1}, 1.0, Context::cpu(), DType::kFloat64)}, {x, len},
                      outs, {}, grads, {OpReq::kWrite, OpReq::kWrite});
  CHECK(grads[0].to_vector<double>() == std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0});
  CHECK(grads[1].to_vector<double>() == std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("Sequence operators take lengths of any dtype, truncated toward zero") {
  NDArray x = random_array({4, 2, 3}, 11);
  const AttrMap use{{"use_sequence_length", "True"}};
  const auto want =
      op::invoke("SequenceLast", {x, NDArray::from_vector<double>({2}, {3, 1})}, use)[0]
          .to_vector<double>();
  for (const NDArray& len :
       {NDArray::from_vector<int32_t>({2}, {3, 1}), NDArray::from_vector<int64_t>({2}, {3, 1}),
        NDArray::from_vector<uint8_t>({2}, {3, 1}), NDArray::from_vector<float>({2}, {3.9f, 1.2f}),
        NDArray::from_vector<half_t>({2}, {half_t(3.5f), half_t(1.0f)})}) {
    INFO("lengths of dtype ", dtype_name(len.dtype()));
    CHECK(op::invoke("SequenceLast", {x, len}, use)[0].to_vector<double>() == want);
  }
}

TEST_CASE("SequenceMask runs in place") {
  NDArray x = random_array({3, 2, 2}, 12);
  const auto before = x.to_vector<double>();
  NDArray len = NDArray::from_vector<double>({2}, {1, 3});
  OpInstance op("SequenceMask", {{"use_sequence_length", "True"}, {"value", "7"}});
  op::invoke_forward(op, {x, len}, {}, {x}, {OpReq::kInplace}, false);
  const auto after = x.to_vector<double>();
  for (size_t i = 0; i < after.size(); ++i) {
    const size_t t = i / 4, b = (i / 2) % 2;
    CHECK(after[i] == ((b == 0 && t >= 1) ? 7.0 : before[i]));
  }
}

TEST_CASE("softmax over (N*heads, T, T) scores with lengths: finite differences") {
  // check_gradient feeds float64 lengths, which softmax refuses (as MXNet):
  // the same check by hand with int32 lengths (N*heads, T).
  const Shape s{4, 3, 3};
  NDArray x = random_array(s, 21, -3, 3), w = random_array(s, 22);
  NDArray len = NDArray::from_vector<int32_t>({4, 3}, {3, 3, 3, 1, 1, 1, 2, 2, 2, 0, 3, 2});
  for (const char* temperature : {"1", "2.5"}) {
    OpInstance op("softmax", {{"use_length", "True"}, {"temperature", temperature}});
    auto loss = [&] {
      auto y = op::invoke(op, {x, len})[0].to_vector<double>();
      const auto wv = w.to_vector<double>();
      double l = 0;
      for (size_t i = 0; i < y.size(); ++i) l += y[i] * wv[i];
      return l;
    };
    auto outs = op::invoke(op, {x, len});
    NDArray dx = NDArray::zeros(s, Context::cpu(), DType::kFloat64);
    op::invoke_backward(op, {w}, {x, len}, outs, {}, {dx, NDArray()},
                        {OpReq::kWrite, OpReq::kNull});
    const auto analytic = dx.to_vector<double>();
    for (int64_t i = 0; i < s.size(); ++i) {
      double* p = x.data<double>();
      const double saved = p[i], h = 1e-6;
      p[i] = saved + h;
      const double plus = loss();
      p[i] = saved - h;
      const double minus = loss();
      p[i] = saved;
      INFO("temperature ", temperature, " element ", i);
      CHECK(analytic[static_cast<size_t>(i)] ==
            doctest::Approx((plus - minus) / (2 * h)).epsilon(1e-6));
    }
  }
}

// ---------------------------------------------------------------- inference and errors

TEST_CASE("LayerNorm shape inference and its errors") {
  ShapeVector in{Shape{2, 3, 4}, Shape(), Shape()};
  auto out = infer("LayerNorm", {}, in);
  CHECK(in[1] == Shape{4});
  CHECK(in[2] == Shape{4});
  CHECK(out[0] == Shape{2, 3, 4});
  CHECK(out[1] == Shape{2, 3, 1});
  ShapeVector from_gamma{Shape{2, -1}, Shape{5}, Shape()};
  infer("LayerNorm", {}, from_gamma);
  CHECK(from_gamma[0] == Shape{2, 5});
  ShapeVector bad_axis{Shape{2, 3}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer("LayerNorm", {{"axis", "2"}}, bad_axis),
                       "LayerNorm 'layer': axis 2 is out of range for 2-D input 'data' (2, 3)",
                       InputError);
  ShapeVector bad_gamma{Shape{2, 3}, Shape{4}, Shape()};
  CHECK_THROWS_WITH_AS(infer("LayerNorm", {}, bad_gamma),
                       "LayerNorm 'layer': input 'gamma': shape (3,) conflicts with (4,)",
                       InputError);
  CHECK_THROWS_AS(OpInstance("LayerNorm", {{"eps", "-1"}}), InputError);
}

TEST_CASE("interleaved attention shape inference and its errors") {
  ShapeVector qkv{Shape{5, 2, 24}};
  CHECK(infer("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "4"}}, qkv)[0] ==
        Shape{8, 5, 5});
  // From the output back to the input's sequence and batch axes.
  ShapeVector unknown{Shape()};
  infer("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "4"}}, unknown, {Shape{8, 5, 5}});
  CHECK(unknown[0] == Shape{5, 2, -1});
  ShapeVector valatt{Shape{5, 2, 24}, Shape()};
  CHECK(infer("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "4"}}, valatt)[0] ==
        Shape{5, 2, 8});
  CHECK(valatt[1] == Shape{8, 5, 5});
  ShapeVector encdec{Shape{3, 2, 8}, Shape{7, 2, -1}};
  CHECK(infer("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}}, encdec)[0] ==
        Shape{4, 3, 7});
  CHECK(encdec[1] == Shape{7, 2, 16});
  ShapeVector encdec_val{Shape{7, 2, 16}, Shape{4, 3, -1}};
  CHECK(infer("_contrib_interleaved_matmul_encdec_valatt", {{"heads", "2"}}, encdec_val)[0] ==
        Shape{3, 2, 8});
  CHECK(encdec_val[1] == Shape{4, 3, 7});

  // Heads that do not divide the channels (MXNet 1.9.1 rounds down silently).
  ShapeVector odd{Shape{3, 2, 10}};
  CHECK_THROWS_WITH_AS(infer("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}}, odd),
                       "_contrib_interleaved_matmul_selfatt_qk 'layer': input "
                       "'queries_keys_values' (3, 2, 10): its last axis (10) must be a positive "
                       "multiple of 3 * heads = 6",
                       InputError);
  ShapeVector odd_q{Shape{3, 2, 9}, Shape()};
  CHECK_THROWS_WITH_AS(infer("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}}, odd_q),
                       "_contrib_interleaved_matmul_encdec_qk 'layer': input 'queries' (3, 2, 9): "
                       "its last axis (9) must be a positive multiple of heads = 2",
                       InputError);
  ShapeVector bad_kv{Shape{3, 2, 8}, Shape{5, 2, 12}};
  CHECK_THROWS_WITH_AS(infer("_contrib_interleaved_matmul_encdec_qk", {{"heads", "2"}}, bad_kv),
                       "_contrib_interleaved_matmul_encdec_qk 'layer': input 'keys_values' (5, 2, "
                       "12): its last axis must be twice that of input 'queries' (3, 2, 8)",
                       InputError);
  ShapeVector bad_att{Shape{3, 2, 12}, Shape{3, 3, 3}};
  CHECK_THROWS_WITH_AS(
      infer("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}}, bad_att),
      "_contrib_interleaved_matmul_selfatt_valatt 'layer': attention's first axis (N*heads): 3 "
      "is not a multiple of 2",
      InputError);
  ShapeVector wrong_steps{Shape{3, 2, 12}, Shape{4, 3, 5}};
  CHECK_THROWS_WITH_AS(
      infer("_contrib_interleaved_matmul_selfatt_valatt", {{"heads", "2"}}, wrong_steps),
      "_contrib_interleaved_matmul_selfatt_valatt 'layer': input 'attention': shape (4, 3, 5) "
      "conflicts with (4, 3, 3)",
      InputError);
  ShapeVector flat{Shape{3, 24}};
  CHECK_THROWS_WITH_AS(infer("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "2"}}, flat),
                       "_contrib_interleaved_matmul_selfatt_qk 'layer': input "
                       "'queries_keys_values' must have 3 dimensions, but has shape (3, 24)",
                       InputError);
  CHECK_THROWS_AS(OpInstance("_contrib_interleaved_matmul_selfatt_qk", {}), InputError);
  CHECK_THROWS_AS(OpInstance("_contrib_interleaved_matmul_selfatt_qk", {{"heads", "0"}}),
                  InputError);
  ShapeVector scalar{Shape::scalar()};
  CHECK_THROWS_AS(infer("_contrib_div_sqrt_dim", {}, scalar), InputError);
}

TEST_CASE("Sequence operators: shape inference and its errors") {
  const AttrMap use{{"use_sequence_length", "True"}};
  ShapeVector in{Shape{5, 3, 2, 4}, Shape()};
  CHECK(infer("SequenceLast", use, in)[0] == Shape{3, 2, 4});
  CHECK(in[1] == Shape{3});
  ShapeVector axis1{Shape{3, 5, 2}, Shape()};
  AttrMap use1 = use;
  use1["axis"] = "1";
  CHECK(infer("SequenceLast", use1, axis1)[0] == Shape{3, 2});
  CHECK(infer("SequenceMask", use1, axis1)[0] == Shape{3, 5, 2});
  ShapeVector from_length{Shape{5, -1, 2}, Shape{7}};
  CHECK(infer("SequenceReverse", use, from_length)[0] == Shape{5, 7, 2});
  CHECK(OpInstance("SequenceMask", use).input_names() ==
        std::vector<std::string>{"data", "sequence_length"});
  CHECK(OpInstance("SequenceMask", {}).input_names() == std::vector<std::string>{"data"});
  op::DTypeVector types{DType::kFloat16, std::nullopt}, aux, out(1);
  OpInstance("SequenceMask", use).infer_type(types, aux, out);
  CHECK(types[1] == DType::kFloat16);  // MXNet's rule: the lengths take data's dtype
  CHECK(out[0] == DType::kFloat16);

  ShapeVector mismatch{Shape{4, 3, 2}, Shape{4}};
  CHECK_THROWS_WITH_AS(infer("SequenceMask", use, mismatch),
                       "SequenceMask 'layer': input 'sequence_length': shape (4,) conflicts with "
                       "(3,)",
                       InputError);
  ShapeVector one_d{Shape{4}};
  CHECK_THROWS_WITH_AS(infer("SequenceLast", {}, one_d),
                       "SequenceLast 'layer': input 'data' must have at least 2 dimensions, but "
                       "has shape (4,)",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("SequenceMask", {{"axis", "2"}}, "mask1"),
                       "mask1: parameter 'axis': 2 is out of range; allowed [0, 1]", InputError);
  CHECK_THROWS_WITH_AS(OpInstance("SequenceReverse", {{"axis", "1"}}, "rev1"),
                       "rev1: axis 1 is not supported; SequenceReverse reverses along axis 0 only",
                       InputError);
}

TEST_CASE("softmax's lengths for (N*heads, T, T) scores are (N*heads, T), as MXNet's") {
  ShapeVector in{Shape{6, 4, 4}, Shape()};
  infer("softmax", {{"use_length", "True"}}, in);
  CHECK(in[1] == Shape{6, 4});
  // MXNet 1.9.1 refuses (N*heads,) and (N,) lengths; so does mx.
  ShapeVector per_batch{Shape{6, 4, 4}, Shape{6}};
  CHECK_THROWS_AS(infer("softmax", {{"use_length", "True"}}, per_batch), InputError);
}
