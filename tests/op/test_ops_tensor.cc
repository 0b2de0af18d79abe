// Tensor and output operators: gradients against finite differences,
// forward values and gradients against MXNet 1.9.1, shape/type inference
// from partial information and the exact messages of shape and parameter
// errors.
#include <doctest/doctest.h>

#include <cmath>

#include "base/error.h"
#include "infer_helpers.h"
#include "op/invoke.h"
#include "op/registry.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::OpInstance;
using op::ShapeVector;

namespace {

using Values = std::vector<std::vector<double>>;

NDArray f32(const Shape& shape, const std::vector<float>& v) {
  return NDArray::from_vector<float>(shape, v);
}

// Cross entropy of SoftmaxOutput's probabilities (outer, classes, inner) with
// one-hot or smoothed targets from integer labels, scaled as MXNet scales
// the gradient. Its gradient with respect to the data is SoftmaxOutput's.
struct SoftmaxCrossEntropy {
  int64_t outer, classes, inner;
  enum Norm { kNull, kBatch, kValid } norm = kNull;
  double grad_scale = 1.0;
  double alpha = 0.0;
  bool use_ignore = false;
  int ignore = -1;
  bool multi_output = false;

  double operator()(const Values& outs, const Values& ins) const {
    const auto& p = outs[0];
    const auto& label = ins[1];
    double count = 1;
    if (norm == kBatch) count = multi_output ? static_cast<double>(outer) : label.size();
    if (norm == kValid) {
      count = 0;
      for (double l : label) count += static_cast<int>(l) != ignore ? 1 : 0;
      count = std::max(count, 1.0);
    }
    double scale = grad_scale / count;
    if (multi_output && norm != kValid) scale /= static_cast<double>(inner);
    double loss = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        const int hot = static_cast<int>(label[static_cast<size_t>(o * inner + j)]);
        if (use_ignore && hot == ignore) continue;
        for (int64_t k = 0; k < classes; ++k) {
          const double target = k == hot ? 1 - alpha : alpha / static_cast<double>(classes - 1);
          loss -= target * std::log(p[static_cast<size_t>((o * classes + k) * inner + j)]);
        }
      }
    }
    return scale * loss;
  }
};

GradientCheckOptions softmax_output_options(SoftmaxCrossEntropy ce) {
  GradientCheckOptions o;
  o.skip_inputs = {1};
  o.integer_inputs = {1};
  o.integer_range = static_cast<int>(ce.classes);
  o.loss = ce;
  return o;
}

enum class Reg { kLinear, kLogistic, kMAE };

// The losses whose gradients the regression outputs give: grad_scale / (outputs
// per sample) times 0.5 (y - l)^2, logistic loss or |y - l|.
GradientCheckOptions regression_options(Reg kind, double grad_scale, double per_sample) {
  GradientCheckOptions o;
  o.skip_inputs = {1};
  o.loss = [=](const Values& outs, const Values& ins) {
    const auto& y = outs[0];
    const auto& l = ins[1];
    double loss = 0;
    for (size_t i = 0; i < y.size(); ++i) {
      switch (kind) {
        case Reg::kLinear: loss += 0.5 * (y[i] - l[i]) * (y[i] - l[i]); break;
        case Reg::kLogistic: loss -= l[i] * std::log(y[i]) + (1 - l[i]) * std::log(1 - y[i]); break;
        case Reg::kMAE: loss += std::abs(y[i] - l[i]); break;
      }
    }
    return grad_scale / per_sample * loss;
  };
  return o;
}

}  // namespace

// ---- reference values from MXNet 1.9.1 ------------------------------------------------

TEST_CASE("reference: tensor operators against MXNet 1.9.1") {
  auto cases = load_reference_cases("tensor");
  CHECK(cases.size() >= 80);
  for (const auto& c : cases) check_reference(c);
}

TEST_CASE("reference: softmax and the output layers against MXNet 1.9.1") {
  auto cases = load_reference_cases("output");
  CHECK(cases.size() >= 35);
  for (const auto& c : cases) check_reference(c);
}

// ---- gradients ----------------------------------------------------------------

TEST_CASE("gradients: Concat, SliceChannel, slice_axis") {
  check_gradient("Concat", {{"num_args", "3"}}, {Shape{2, 1, 3}, Shape{2, 2, 3}, Shape{2, 4, 3}});
  check_gradient("Concat", {{"num_args", "2"}, {"dim", "0"}}, {Shape{1, 4}, Shape{3, 4}});
  check_gradient("concat", {{"num_args", "2"}, {"dim", "-1"}}, {Shape{2, 3, 2}, Shape{2, 3, 5}});
  check_gradient("SliceChannel", {{"num_outputs", "3"}}, {Shape{2, 6, 2}});
  check_gradient("split", {{"num_outputs", "4"}, {"axis", "-1"}, {"squeeze_axis", "True"}},
                 {Shape{3, 2, 4}});
  check_gradient("SliceChannel", {{"num_outputs", "2"}, {"axis", "0"}}, {Shape{4, 3}});
  check_gradient("slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "None"}}, {Shape{2, 4, 3}});
  check_gradient("slice_axis", {{"axis", "-1"}, {"begin", "-3"}, {"end", "-1"}}, {Shape{3, 5}});
  check_gradient("slice_axis", {{"axis", "0"}, {"begin", "0"}, {"end", "2"}}, {Shape{3, 2, 2}});
}

TEST_CASE("gradients: Flatten, Reshape, expand_dims, transpose") {
  check_gradient("Flatten", {}, {Shape{2, 3, 4}});
  check_gradient("flatten", {}, {Shape{5}});
  for (const char* spec : {"(4, 6)", "(0, -1)", "(-3, -2)", "(-4, 1, 2, -2)", "(-2, 1)"})
    check_gradient("Reshape", {{"shape", spec}}, {Shape{2, 3, 4}});
  check_gradient("reshape", {{"shape", "(-1, 0)"}, {"reverse", "True"}}, {Shape{2, 3, 4}});
  check_gradient("Reshape", {{"target_shape", "(0, 4)"}}, {Shape{2, 3, 4}});
  check_gradient("expand_dims", {{"axis", "1"}}, {Shape{2, 3}});
  check_gradient("expand_dims", {{"axis", "-1"}}, {Shape{2, 3}});
  check_gradient("transpose", {}, {Shape{2, 3, 4}});
  check_gradient("transpose", {{"axes", "(2, 0, 1)"}}, {Shape{2, 3, 4}});
  check_gradient("transpose", {{"axes", "(0, -2, 1, 3)"}}, {Shape{2, 3, 4, 5}});
  check_gradient("transpose", {{"axes", "(1, 0, 2)"}}, {Shape{3, 4, 5}});
  // Tiled 2-D path, large enough to run in parallel.
  GradientCheckOptions big;
  big.max_checks_per_input = 40;
  check_gradient("transpose", {{"axes", "(1, 0)"}}, {Shape{190, 210}}, big);
  check_gradient("transpose", {{"axes", "(0, 2, 1)"}}, {Shape{3, 70, 33}}, big);
}

TEST_CASE("gradients: broadcast operators over broadcast patterns") {
  const std::vector<std::pair<Shape, Shape>> patterns = {
      {Shape{2, 3}, Shape{2, 3}},      {Shape{2, 3, 4}, Shape{1, 3, 1}},
      {Shape{3, 1}, Shape{1, 4}},      {Shape{2, 3}, Shape{3}},
      {Shape{1}, Shape{2, 3}},         {Shape{2, 1, 4}, Shape{3, 1}},
      {Shape{4, 1, 3}, Shape{4, 2, 3}}};
  GradientCheckOptions away;
  away.min_abs = 0.2;  // divisors away from 0
  for (const char* name :
       {"broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div", "broadcast_maximum",
        "broadcast_minimum", "broadcast_plus", "broadcast_minus"}) {
    for (const auto& [a, b] : patterns) {
      const std::string op = name;
      CAPTURE(op);
      CAPTURE(a);
      CAPTURE(b);
      check_gradient(name, {}, {a, b}, away);
    }
  }
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  check_gradient("broadcast_mul", {}, {Shape{64, 700}, Shape{1, 700}}, big);
  check_gradient("broadcast_sub", {}, {Shape{64, 1}, Shape{64, 700}}, big);
}

TEST_CASE("gradients: broadcast comparison and logical operators are zero") {
  const std::vector<std::pair<Shape, Shape>> patterns = {
      {Shape{2, 3}, Shape{2, 3}}, {Shape{2, 3, 4}, Shape{1, 3, 1}}, {Shape{3, 1}, Shape{1, 4}}};
  for (const char* name :
       {"broadcast_equal", "broadcast_not_equal", "broadcast_greater", "broadcast_greater_equal",
        "broadcast_lesser", "broadcast_lesser_equal", "broadcast_logical_and",
        "broadcast_logical_or", "broadcast_logical_xor"}) {
    for (const auto& [a, b] : patterns) {
      const std::string op = name;
      CAPTURE(op);
      CAPTURE(a);
      CAPTURE(b);
      check_gradient(name, {}, {a, b});
    }
  }
}

TEST_CASE("gradients: sum, mean, max, min over axes") {
  const std::vector<AttrMap> settings = {
      {},
      {{"axis", "1"}},
      {{"axis", "-1"}},
      {{"axis", "(0, 2)"}},
      {{"axis", "(0, 2)"}, {"keepdims", "True"}},
      {{"axis", "1"}, {"exclude", "True"}},
      {{"axis", "(0, -1)"}, {"exclude", "True"}, {"keepdims", "True"}},
      {{"axis", "()"}, {"keepdims", "True"}},
  };
  for (const char* name : {"sum", "mean", "max", "min"})
    for (const auto& attrs : settings) check_gradient(name, attrs, {Shape{2, 3, 4}});
  check_gradient("sum_axis", {{"axis", "0"}}, {Shape{5}});
  check_gradient("max_axis", {{"axis", "1"}}, {Shape{3, 1, 2}});
  // Large: the parallel paths (a full reduction in blocks, rows, columns).
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  for (const char* name : {"sum", "mean", "max", "min"}) {
    check_gradient(name, {}, {Shape{64, 700}}, big);
    check_gradient(name, {{"axis", "0"}}, {Shape{64, 700}}, big);
    check_gradient(name, {{"axis", "1"}}, {Shape{64, 700}}, big);
    check_gradient(name, {{"axis", "(0, 2)"}}, {Shape{8, 30, 200}}, big);
  }
  // Few long outputs: each split among several GPU blocks (reduce_split_parts).
  check_gradient("sum", {{"axis", "1"}}, {Shape{3, 30000}}, big);
}

TEST_CASE("gradients: dot and batch_dot") {
  check_gradient("dot", {}, {Shape{3, 4}, Shape{4, 5}});
  check_gradient("dot", {{"transpose_a", "True"}}, {Shape{4, 3}, Shape{4, 5}});
  check_gradient("dot", {{"transpose_b", "True"}}, {Shape{3, 4}, Shape{5, 4}});
  check_gradient("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                 {Shape{4, 3}, Shape{5, 4}});
  check_gradient("dot", {}, {Shape{2, 3, 4}, Shape{4, 2, 3}});
  check_gradient("dot", {{"transpose_a", "True"}}, {Shape{4, 3, 2}, Shape{4, 5}});
  check_gradient("dot", {{"transpose_b", "True"}}, {Shape{2, 3, 4}, Shape{5, 2, 4}});
  check_gradient("dot", {}, {Shape{4}, Shape{4, 3}});
  check_gradient("dot", {}, {Shape{3, 4}, Shape{4}});
  check_gradient("dot", {}, {Shape{5}, Shape{5}});
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  check_gradient("dot", {}, {Shape{70, 90}, Shape{90, 80}}, big);
  check_gradient("batch_dot", {}, {Shape{2, 3, 4}, Shape{2, 4, 5}});
  check_gradient("batch_dot", {{"transpose_a", "True"}}, {Shape{3, 4, 2}, Shape{3, 4, 5}});
  check_gradient("batch_dot", {{"transpose_b", "True"}}, {Shape{2, 3, 4}, Shape{2, 5, 4}});
  check_gradient("batch_dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                 {Shape{2, 4, 3}, Shape{2, 5, 4}});
  check_gradient("batch_dot", {}, {Shape{2, 3, 2, 4}, Shape{2, 3, 4, 3}});
  check_gradient("batch_dot", {}, {Shape{1, 3, 4}, Shape{1, 4, 2}});
}

TEST_CASE("gradients: Cast, softmax, log_softmax") {
  check_gradient("Cast", {{"dtype", "float64"}}, {Shape{2, 3}});
  check_gradient("softmax", {}, {Shape{3, 5}});
  check_gradient("softmax", {{"axis", "1"}}, {Shape{2, 3, 4}});
  check_gradient("softmax", {{"axis", "0"}, {"temperature", "2.5"}}, {Shape{4, 3}});
  check_gradient("softmax", {{"dtype", "float64"}}, {Shape{2, 4}});
  check_gradient("log_softmax", {}, {Shape{3, 5}});
  check_gradient("log_softmax", {{"axis", "-2"}, {"temperature", "0.7"}}, {Shape{2, 3, 4}});
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  check_gradient("softmax", {{"axis", "1"}}, {Shape{40, 30, 30}}, big);
  // Long last-axis rows: a GPU block per row (softmax_gpu.cu).
  check_gradient("softmax", {}, {Shape{4, 300}}, big);
  check_gradient("log_softmax", {{"temperature", "1.5"}}, {Shape{2, 2100}}, big);
}

TEST_CASE("gradients: SoftmaxOutput is the gradient of cross entropy") {
  using CE = SoftmaxCrossEntropy;
  SUBCASE("default") {
    check_gradient("SoftmaxOutput", {}, {Shape{4, 5}, Shape{4}},
                   softmax_output_options(CE{4, 5, 1}));
    // Many classes: a GPU block per row.
    GradientCheckOptions many = softmax_output_options(CE{8, 300, 1});
    many.max_checks_per_input = 20;
    check_gradient("SoftmaxOutput", {}, {Shape{8, 300}, Shape{8}}, many);
  }
  SUBCASE("grad_scale, batch normalization, the Softmax alias") {
    CE ce{4, 3, 1, CE::kBatch, 2.0};
    check_gradient("Softmax", {{"grad_scale", "2"}, {"normalization", "batch"}},
                   {Shape{4, 3}, Shape{4}}, softmax_output_options(ce));
  }
  SUBCASE("valid normalization with ignored labels") {
    CE ce{8, 4, 1, CE::kValid};
    ce.use_ignore = true;
    ce.ignore = 2;
    check_gradient("SoftmaxOutput",
                   {{"normalization", "valid"}, {"use_ignore", "True"}, {"ignore_label", "2"}},
                   {Shape{8, 4}, Shape{8}}, softmax_output_options(ce));
  }
  SUBCASE("label smoothing") {
    CE ce{4, 5, 1};
    ce.alpha = 0.3;
    check_gradient("SoftmaxOutput", {{"smooth_alpha", "0.3"}}, {Shape{4, 5}, Shape{4}},
                   softmax_output_options(ce));
  }
  SUBCASE("label smoothing with ignored labels") {
    CE ce{6, 4, 1, CE::kBatch};
    ce.alpha = 0.2;
    ce.use_ignore = true;
    ce.ignore = 1;
    check_gradient("SoftmaxOutput",
                   {{"smooth_alpha", "0.2"},
                    {"use_ignore", "True"},
                    {"ignore_label", "1"},
                    {"normalization", "batch"}},
                   {Shape{6, 4}, Shape{6}}, softmax_output_options(ce));
  }
  SUBCASE("multi_output in every normalization") {
    for (auto [norm, mode] : {std::pair{"null", CE::kNull}, std::pair{"batch", CE::kBatch},
                              std::pair{"valid", CE::kValid}}) {
      CE ce{2, 3, 4, mode};
      ce.multi_output = true;
      ce.use_ignore = true;
      ce.ignore = 0;
      const std::string normalization = norm;
      CAPTURE(normalization);
      check_gradient("SoftmaxOutput",
                     {{"multi_output", "True"},
                      {"normalization", norm},
                      {"use_ignore", "True"},
                      {"ignore_label", "0"}},
                     {Shape{2, 3, 2, 2}, Shape{2, 2, 2}}, softmax_output_options(ce));
    }
    CE flat{2, 3, 4};
    flat.multi_output = true;
    check_gradient("SoftmaxOutput", {{"multi_output", "True"}}, {Shape{2, 3, 4}, Shape{2, 4}},
                   softmax_output_options(flat));
  }
  SUBCASE("multi_output with label smoothing") {
    // MXNet 1.9.1 ignores smooth_alpha here; mx smooths as the parameter says.
    CE ce{2, 4, 6, CE::kBatch};
    ce.multi_output = true;
    ce.alpha = 0.1;
    check_gradient("SoftmaxOutput",
                   {{"multi_output", "True"}, {"smooth_alpha", "0.1"}, {"normalization", "batch"}},
                   {Shape{2, 4, 2, 3}, Shape{2, 6}}, softmax_output_options(ce));
  }
  SUBCASE("preserve_shape") {
    CE ce{6, 4, 1, CE::kBatch};
    check_gradient("SoftmaxOutput", {{"preserve_shape", "True"}, {"normalization", "batch"}},
                   {Shape{2, 3, 4}, Shape{2, 3}}, softmax_output_options(ce));
  }
  SUBCASE("N-D data flattened to (n, rest)") {
    // MXNet reads the first n of the (n, d1) labels; batch divides by all of them.
    auto o = softmax_output_options(CE{2, 12, 1});
    o.integer_range = 12;
    o.loss = [](const Values& outs, const Values& ins) {
      CE ce{2, 12, 1, CE::kBatch};
      Values first{outs[0]}, labels{ins[0], {ins[1][0], ins[1][1]}};
      return ce(first, labels) * 2.0 / 6.0;
    };
    check_gradient("SoftmaxOutput", {{"normalization", "batch"}}, {Shape{2, 3, 4}, Shape{2, 3}}, o);
  }
  SUBCASE("probabilities as labels") {
    GradientCheckOptions o;
    o.skip_inputs = {1};
    // sum over rows of logsumexp(x) - <label, x>: its gradient is p - label.
    o.loss = [](const Values&, const Values& ins) {
      const auto& x = ins[0];
      const auto& l = ins[1];
      double loss = 0;
      for (size_t row = 0; row < 3; ++row) {
        double top = -INFINITY, sum = 0;
        for (size_t k = 0; k < 4; ++k) top = std::max(top, x[row * 4 + k]);
        for (size_t k = 0; k < 4; ++k) sum += std::exp(x[row * 4 + k] - top);
        loss += top + std::log(sum);
        for (size_t k = 0; k < 4; ++k) loss -= l[row * 4 + k] * x[row * 4 + k];
      }
      return 1.5 * loss;
    };
    check_gradient("SoftmaxOutput", {{"grad_scale", "1.5"}}, {Shape{3, 4}, Shape{3, 4}}, o);
  }
}

TEST_CASE("SoftmaxOutput with out_grad multiplies by the output's gradient") {
  // As documented; MXNet 1.9.1 multiplies by the softmax output instead.
  OpInstance op("SoftmaxOutput", {{"out_grad", "True"}, {"normalization", "batch"}});
  NDArray x = f32({2, 3}, {0.5f, -1, 2, 1, 0, -0.5f});
  NDArray label = f32({2}, {2, 0});
  NDArray head = f32({2, 3}, {1, -2, 0.5f, 3, 0.25f, -1});
  NDArray y = op::invoke(op, {x, label})[0];
  NDArray g = NDArray::zeros({2, 3}, Context::cpu(), DType::kFloat32);
  op::invoke_backward(op, {head}, {x, label}, {y}, {}, {g, NDArray()},
                      {op::OpReq::kWrite, op::OpReq::kNull});
  auto p = y.to_vector<float>(), h = head.to_vector<float>(), grad = g.to_vector<float>();
  for (size_t i = 0; i < 6; ++i) {
    const float hot = (i == 2 || i == 3) ? 1.0f : 0.0f;
    CHECK(grad[i] == doctest::Approx((p[i] - hot) * h[i] / 2));
  }
}

TEST_CASE("gradients: regression outputs are the gradients of their losses") {
  check_gradient("LinearRegressionOutput", {{"grad_scale", "2"}}, {Shape{3, 4}, Shape{3, 4}},
                 regression_options(Reg::kLinear, 2, 4));
  check_gradient("LinearRegressionOutput", {}, {Shape{5, 1}, Shape{5}},
                 regression_options(Reg::kLinear, 1, 1));
  check_gradient("LinearRegressionOutput", {}, {Shape{2, 3, 2}, Shape{2, 6}},
                 regression_options(Reg::kLinear, 1, 6));
  auto logistic = regression_options(Reg::kLogistic, 0.5, 3);
  check_gradient("LogisticRegressionOutput", {{"grad_scale", "0.5"}}, {Shape{4, 3}, Shape{4, 3}},
                 logistic);
  auto mae = regression_options(Reg::kMAE, 1.5, 5);
  check_gradient("MAERegressionOutput", {{"grad_scale", "1.5"}}, {Shape{3, 5}, Shape{3, 5}}, mae);
}

// ---- forward values and semantics ----------------------------------------------------

TEST_CASE("Reshape's special codes give MXNet's shapes") {
  const Shape in{2, 3, 4};
  const std::vector<std::pair<std::string, Shape>> expected = {
      {"(4, 6)", Shape{4, 6}},
      {"(0, -1)", Shape{2, 12}},
      {"(-3, -2)", Shape{6, 4}},
      {"(-4, 1, 2, -2)", Shape{1, 2, 3, 4}},
      {"(-4, -1, 2, -2)", Shape{1, 2, 3, 4}},
      {"(-2, 1)", Shape{2, 3, 4, 1}},
      {"(2, -1, 0)", Shape{2, 3, 4}},
      {"(0, -4, 3, -1, 4)", Shape{2, 3, 1, 4}},
      {"(-1,)", Shape{24}},
      {"(-2,)", Shape{2, 3, 4}}};
  for (const auto& [spec, shape] : expected) {
    CAPTURE(spec);
    CHECK(out_shape("Reshape", {{"shape", spec}}, {in}) == shape);
  }
  CHECK(out_shape("Reshape", {{"shape", "(0, 0, -1)"}, {"reverse", "True"}}, {in}) == in);
  CHECK(out_shape("Reshape", {{"shape", "(-1, 0)"}, {"reverse", "True"}}, {in}) == Shape{6, 4});
  CHECK(out_shape("Reshape", {{"shape", "(-1, 0, 0)"}, {"reverse", "True"}}, {in}) == in);
  CHECK(out_shape("Reshape", {{"target_shape", "(0, 4)"}}, {in}) == Shape{6, 4});
  CHECK(out_shape("Reshape", {{"target_shape", "(0, 3, 4)"}, {"keep_highest", "True"}}, {in}) ==
        in);
  // Values keep their order.
  NDArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  auto y = op::invoke("Reshape", {x}, {{"shape", "(3, -1)"}});
  CHECK(y[0].shape() == Shape{3, 2});
  CHECK(y[0].to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("shape operators keep values in the right places") {
  NDArray x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(op::invoke("transpose", {x})[0].to_vector<float>() == std::vector<float>{1, 4, 2, 5, 3, 6});
  auto parts = op::invoke("SliceChannel", {x}, {{"num_outputs", "3"}, {"squeeze_axis", "True"}});
  REQUIRE(parts.size() == 3);
  CHECK(parts[1].shape() == Shape{2});
  CHECK(parts[1].to_vector<float>() == std::vector<float>{2, 5});
  auto joined = op::invoke("Concat", {x, x}, {{"num_args", "2"}, {"dim", "0"}});
  CHECK(joined[0].shape() == Shape{4, 3});
  auto slice = op::invoke("slice_axis", {x}, {{"axis", "1"}, {"begin", "-2"}, {"end", "None"}});
  CHECK(slice[0].to_vector<float>() == std::vector<float>{2, 3, 5, 6});
  auto expanded = op::invoke("expand_dims", {x}, {{"axis", "1"}});
  CHECK(expanded[0].shape() == Shape{2, 1, 3});
  // Any element type moves through the layout operators.
  NDArray ints = NDArray::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  CHECK(op::invoke("transpose", {ints})[0].to_vector<int32_t>() ==
        std::vector<int32_t>{1, 3, 2, 4});
  CHECK(op::invoke("Flatten", {ints})[0].dtype() == DType::kInt32);
}

TEST_CASE("reductions, broadcasting and products compute MXNet's values") {
  NDArray x = f32({2, 3}, {1, 5, 5, 2, 1, 2});
  CHECK(op::invoke("sum", {x})[0].to_vector<float>() == std::vector<float>{16});
  CHECK(op::invoke("sum", {x})[0].shape() == Shape{1});
  CHECK(op::invoke("mean", {x}, {{"axis", "0"}})[0].to_vector<float>() ==
        std::vector<float>{1.5f, 3, 3.5f});
  CHECK(op::invoke("max", {x}, {{"axis", "1"}, {"keepdims", "True"}})[0].shape() == Shape{2, 1});
  CHECK(op::invoke("min", {x}, {{"axis", "(0, 1)"}, {"exclude", "True"}})[0].shape() ==
        Shape{2, 3});
  // The gradient of max goes to every maximal element.
  OpInstance max("max", {{"axis", "1"}});
  NDArray y = op::invoke(max, {x})[0];
  NDArray g = NDArray::zeros({2, 3}, Context::cpu(), DType::kFloat32);
  op::invoke_backward(max, {f32({2}, {1, 2})}, {x}, {y}, {}, {g}, {op::OpReq::kWrite});
  CHECK(g.to_vector<float>() == std::vector<float>{0, 1, 1, 2, 0, 2});
  // NaN wins max, as in MXNet.
  NDArray nan = f32({3}, {1, NAN, 2});
  CHECK(std::isnan(op::invoke("max", {nan})[0].to_vector<float>()[0]));

  // Ties of broadcast_maximum give the gradient to lhs.
  OpInstance bmax("broadcast_maximum", {});
  NDArray a = f32({1, 3}, {1, 2, 3}), b = f32({2, 1}, {2, 1});
  NDArray out = op::invoke(bmax, {a, b})[0];
  CHECK(out.to_vector<float>() == std::vector<float>{2, 2, 3, 1, 2, 3});
  NDArray ga = NDArray::zeros({1, 3}, Context::cpu(), DType::kFloat32);
  NDArray gb = NDArray::zeros({2, 1}, Context::cpu(), DType::kFloat32);
  op::invoke_backward(bmax, {NDArray::full({2, 3}, 1.0, Context::cpu(), DType::kFloat32)}, {a, b},
                      {out}, {}, {ga, gb}, {op::OpReq::kWrite, op::OpReq::kWrite});
  CHECK(ga.to_vector<float>() == std::vector<float>{1, 2, 2});
  CHECK(gb.to_vector<float>() == std::vector<float>{1, 0});

  NDArray v = f32({3}, {1, 2, 3});
  CHECK(op::invoke("dot", {v, v})[0].to_vector<float>() == std::vector<float>{14});
  CHECK(op::invoke("dot", {NDArray::full({2, 3, 4}, 1.0), NDArray::full({4, 5}, 1.0)})[0].shape() ==
        Shape{2, 3, 5});
}

TEST_CASE("gradients accumulate with kAdd") {
  // Reductions, products and layout operators add to what is there.
  struct Case {
    std::string op;
    AttrMap attrs;
    std::vector<Shape> shapes;
  };
  const std::vector<Case> cases = {
      {"sum", {{"axis", "1"}}, {Shape{2, 3}}},
      {"max", {}, {Shape{2, 3}}},
      {"broadcast_mul", {}, {Shape{2, 3}, Shape{1, 3}}},
      {"dot", {}, {Shape{2, 3}, Shape{3, 2}}},
      {"batch_dot", {}, {Shape{2, 2, 3}, Shape{2, 3, 2}}},
      {"transpose", {}, {Shape{2, 3}}},
      {"slice_axis", {{"axis", "1"}, {"begin", "1"}, {"end", "3"}}, {Shape{2, 3}}},
      {"Concat", {{"num_args", "2"}}, {Shape{2, 1}, Shape{2, 2}}},
      {"softmax", {}, {Shape{2, 3}}},
      {"Cast", {{"dtype", "float32"}}, {Shape{2, 3}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.op);
    OpInstance op(c.op, c.attrs);
    std::vector<NDArray> inputs;
    double seed = 0.1;
    for (const auto& s : c.shapes) {
      std::vector<float> v(static_cast<size_t>(s.size()));
      for (auto& e : v) e = static_cast<float>(std::sin(seed += 0.7));
      inputs.push_back(f32(s, v));
    }
    auto outs = op::invoke(op, inputs);
    std::vector<NDArray> ograds;
    for (const auto& o : outs)
      ograds.push_back(NDArray::full(o.shape(), 0.5, Context::cpu(), o.dtype()));
    std::vector<NDArray> written, added;
    std::vector<op::OpReq> write_req, add_req;
    for (const auto& in : inputs) {
      written.push_back(NDArray::zeros(in.shape(), Context::cpu(), DType::kFloat32));
      added.push_back(NDArray::full(in.shape(), 1.0, Context::cpu(), DType::kFloat32));
      write_req.push_back(op::OpReq::kWrite);
      add_req.push_back(op::OpReq::kAdd);
    }
    op::invoke_backward(op, ograds, inputs, outs, {}, written, write_req);
    op::invoke_backward(op, ograds, inputs, outs, {}, added, add_req);
    for (size_t k = 0; k < inputs.size(); ++k) {
      auto w = written[k].to_vector<float>(), a = added[k].to_vector<float>();
      for (size_t i = 0; i < w.size(); ++i) CHECK(a[i] == doctest::Approx(w[i] + 1.0f));
    }
  }
}

TEST_CASE("Cast, one_hot and argmax handle integer types") {
  NDArray x = f32({4}, {-1.7f, 300, 2.5f, 255.9f});
  CHECK(op::invoke("Cast", {x}, {{"dtype", "uint8"}})[0].to_vector<uint8_t>() ==
        std::vector<uint8_t>{255, 44, 2, 255});
  CHECK(op::invoke("cast", {x}, {{"dtype", "int32"}})[0].to_vector<int32_t>() ==
        std::vector<int32_t>{-1, 300, 2, 255});
  auto half = op::invoke("Cast", {x}, {{"dtype", "float16"}})[0];
  CHECK(half.dtype() == DType::kFloat16);
  CHECK(static_cast<float>(half.to_vector<half_t>()[2]) == 2.5f);

  NDArray idx = NDArray::from_vector<int32_t>({3}, {2, 0, 7});
  auto hot = op::invoke("one_hot", {idx}, {{"depth", "3"}, {"on_value", "4"}, {"dtype", "int64"}});
  CHECK(hot[0].shape() == Shape{3, 3});
  CHECK(hot[0].to_vector<int64_t>() == std::vector<int64_t>{0, 0, 4, 4, 0, 0, 0, 0, 0});

  NDArray m = f32({2, 3}, {1, 5, 5, NAN, 1, 2});
  CHECK(op::invoke("argmax", {m}, {{"axis", "1"}})[0].to_vector<float>() ==
        std::vector<float>{1, 0});
  NDArray mi = NDArray::from_vector<int32_t>({2, 2}, {3, 9, 4, 1});
  auto am = op::invoke("argmax", {mi}, {{"axis", "0"}, {"keepdims", "True"}})[0];
  CHECK(am.dtype() == DType::kInt32);
  CHECK(am.shape() == Shape{1, 2});
  CHECK(am.to_vector<int32_t>() == std::vector<int32_t>{1, 0});
  CHECK(op::invoke("argmax", {mi})[0].to_vector<int32_t>() == std::vector<int32_t>{1});

  const auto& registry = op::OpRegistry::get();
  CHECK_FALSE(registry.find("argmax").has_backward());
  CHECK_FALSE(registry.find("one_hot").has_backward());
  CHECK(registry.find("Cast").has_backward());
}

TEST_CASE("softmax is stable, honours length and matches log_softmax") {
  NDArray big = f32({1, 3}, {1000, 1000, -1000});
  auto p = op::invoke("softmax", {big})[0].to_vector<float>();
  CHECK(p[0] == doctest::Approx(0.5));
  CHECK(p[2] == 0.0f);
  auto lp = op::invoke("log_softmax", {big})[0].to_vector<float>();
  CHECK(lp[0] == doctest::Approx(-std::log(2.0)));
  CHECK(lp[2] == doctest::Approx(-2000 - std::log(2.0)));
  NDArray len = NDArray::from_vector<int32_t>({2}, {1, 0});
  auto masked =
      op::invoke("softmax", {f32({2, 3}, {1, 1, 1, 1, 1, 1}), len}, {{"use_length", "True"}})[0];
  CHECK(masked.to_vector<float>() == std::vector<float>{1, 0, 0, 0, 0, 0});
  auto wide = op::invoke("softmax", {f32({1, 2}, {0, 1})}, {{"dtype", "float64"}})[0];
  CHECK(wide.dtype() == DType::kFloat64);
  OpInstance with_length("softmax", {{"use_length", "True"}});
  CHECK(with_length.input_names() == std::vector<std::string>{"data", "length"});
}

// ---- shape and type inference ----------------------------------------------------

TEST_CASE("shape inference works from partial information") {
  // Concat: one unknown size on the axis follows from the output.
  auto c = infer("Concat", {{"num_args", "2"}}, {Shape{2, 3}, Shape{-1, -1}}, {Shape{2, 7}});
  CHECK(c.in[1] == Shape{2, 4});
  c = infer("Concat", {{"num_args", "2"}}, {Shape{2, 3}, Shape()});
  CHECK(c.in[1] == Shape{2, -1});
  CHECK(c.out[0] == Shape{2, -1});
  // Reshape: the input's unknown dimension from the target's size.
  auto r = infer("Reshape", {{"shape", "(6, 4)"}}, {Shape{-1, 3, 4}});
  CHECK(r.in[0] == Shape{2, 3, 4});
  CHECK(r.out[0] == Shape{6, 4});
  r = infer("Reshape", {{"shape", "(0, -1)"}}, {Shape{-1, 3, 4}});
  CHECK(r.out[0] == Shape{-1, -1});
  r = infer("Reshape", {}, {Shape{2, -1, 4}}, {Shape{6, 4}});
  CHECK(r.in[0] == Shape{2, 3, 4});
  // Flatten both ways.
  CHECK(out_shape("Flatten", {}, {Shape{-1, 3, 4}}) == Shape{-1, 12});
  auto f = infer("Flatten", {}, {Shape{-1, 3, -1}}, {Shape{5, 12}});
  CHECK(f.in[0] == Shape{5, 3, 4});
  // transpose, expand_dims, SliceChannel, slice_axis from their outputs.
  CHECK(infer("transpose", {{"axes", "(2, 0, 1)"}}, {Shape()}, {Shape{4, 2, 3}}).in[0] ==
        Shape{2, 3, 4});
  CHECK(infer("expand_dims", {{"axis", "1"}}, {Shape()}, {Shape{2, 1, 3}}).in[0] == Shape{2, 3});
  CHECK(infer("SliceChannel", {{"num_outputs", "2"}}, {Shape()}, {Shape(), Shape{2, 3}}).in[0] ==
        Shape{2, 6});
  CHECK(infer("split", {{"num_outputs", "2"}, {"axis", "-1"}, {"squeeze_axis", "True"}}, {Shape()},
              {Shape{4, 3}, Shape()})
            .in[0] == Shape{4, 3, 2});
  CHECK(infer("slice_axis", {{"axis", "1"}, {"begin", "0"}, {"end", "2"}}, {Shape{-1, 5}},
              {Shape{3, 2}})
            .in[0] == Shape{3, 5});
  // Broadcasting keeps what it can.
  CHECK(out_shape("broadcast_add", {}, {Shape{-1, 3}, Shape{2, 1}}) == Shape{-1, 3});
  CHECK(out_shape("broadcast_add", {}, {Shape{2, 1, 3}, Shape{4, 1}}) == Shape{2, 4, 3});
  // Reductions fill kept input axes from the output.
  auto s = infer("sum", {{"axis", "1"}}, {Shape{-1, 3, -1}}, {Shape{2, 4}});
  CHECK(s.in[0] == Shape{2, 3, 4});
  CHECK(out_shape("sum", {{"axis", "(0, 1, 2)"}}, {Shape{2, 3, 4}}) == Shape{1});
  CHECK(out_shape("sum", {{"axis", "(0, -1)"}, {"exclude", "True"}}, {Shape{2, 3, 4}}) ==
        Shape{2, 4});
  CHECK(out_shape("argmax", {}, {Shape{2, 3}}) == Shape{1});
  CHECK(out_shape("argmax", {{"keepdims", "True"}}, {Shape{2, 3}}) == Shape{1, 1});
  CHECK(out_shape("argmax", {{"axis", "0"}}, {Shape{3}}) == Shape{1});
  // Products.
  CHECK(out_shape("dot", {{"transpose_a", "True"}}, {Shape{4, 3, 2}, Shape{4, 5, 6}}) ==
        Shape{3, 2, 5, 6});
  CHECK(out_shape("batch_dot", {{"transpose_b", "True"}}, {Shape{2, 5, 3, 4}, Shape{2, 5, 6, 4}}) ==
        Shape{2, 5, 3, 6});
  CHECK(infer("one_hot", {{"depth", "4"}}, {Shape()}, {Shape{2, 3, 4}}).in[0] == Shape{2, 3});
  // Output layers: labels from the data, data from the output.
  CHECK(infer("SoftmaxOutput", {}, {Shape{4, 3}, Shape()}).in[1] == Shape{4});
  CHECK(infer("SoftmaxOutput", {}, {Shape{4, 3, 5}, Shape()}).in[1] == Shape{4, 3});
  CHECK(infer("SoftmaxOutput", {{"multi_output", "True"}}, {Shape{4, 3, 5, 6}, Shape()}).in[1] ==
        Shape{4, 30});
  for (const Shape& label : {Shape{4, 5, 6}, Shape{4, 1, 5, 6}, Shape{4, 30}})
    CHECK(infer("SoftmaxOutput", {{"multi_output", "True"}}, {Shape{4, 3, 5, 6}, label}).in[1] ==
          label);
  CHECK(infer("SoftmaxOutput", {}, {Shape{4, 3}, Shape{-1, 3}}).in[1] == Shape{4, 3});
  CHECK(infer("SoftmaxOutput", {}, {Shape(), Shape()}, {Shape{2, 5}}).in[0] == Shape{2, 5});
  CHECK(infer("LinearRegressionOutput", {}, {Shape{4, 1}, Shape()}).in[1] == Shape{4});
  CHECK(infer("LogisticRegressionOutput", {}, {Shape{4, 3}, Shape()}).in[1] == Shape{4, 3});
  CHECK(infer("MAERegressionOutput", {}, {Shape{4, 3}, Shape{4, 3, 1}}).in[1] == Shape{4, 3, 1});
  CHECK(
      infer("softmax", {{"use_length", "True"}, {"axis", "1"}}, {Shape{2, 3, 4}, Shape()}).in[1] ==
      Shape{2, 4});
}

TEST_CASE("type inference: Cast, one_hot, argmax, softmax dtype, output layers") {
  auto types = [](const std::string& name, const AttrMap& attrs, op::DTypeVector in) {
    OpInstance op(name, attrs, "layer");
    op::DTypeVector aux, out(op.output_names().size());
    op.infer_type(in, aux, out);
    return std::pair{in, out};
  };
  CHECK(types("Cast", {{"dtype", "int8"}}, {DType::kFloat32}).second[0] == DType::kInt8);
  CHECK(types("one_hot", {{"depth", "2"}}, {DType::kInt32}).second[0] == DType::kFloat32);
  CHECK(types("argmax", {}, {DType::kFloat64}).second[0] == DType::kFloat64);
  CHECK(types("softmax", {{"dtype", "float64"}}, {DType::kFloat32}).second[0] == DType::kFloat64);
  CHECK(types("SoftmaxOutput", {}, {DType::kFloat64, std::nullopt}).first[1] == DType::kFloat64);
  CHECK_THROWS_WITH_AS(types("softmax", {{"dtype", "int32"}}, {DType::kFloat32}),
                       "layer: dtype must be float32 or float64, not int32", InputError);
  CHECK_THROWS_WITH_AS(
      types("softmax", {{"use_length", "True"}}, {DType::kFloat32, DType::kFloat32}),
      "layer: input 'length' must have an integer type, not float32", InputError);
  CHECK_THROWS_WITH_AS(types("broadcast_add", {}, {DType::kFloat32, DType::kFloat64}),
                       "layer: input 1: dtype float32 conflicts with float64", InputError);
}

TEST_CASE("shape errors name the problem") {
  const Shape x{2, 3, 4};
  CHECK(infer_error("Reshape", {{"shape", "(4, 2)"}}, {x}) ==
        "layer: cannot reshape input of shape (2, 3, 4) (24 elements) to (4, 2) (8 elements)");
  CHECK(infer_error("Reshape", {{"shape", "(5, -1)"}}, {x}) ==
        "layer: shape (5, -1) does not fit input of shape (2, 3, 4): the 24 input elements do "
        "not divide into the other dimensions");
  CHECK(infer_error("Reshape", {{"shape", "(-1, -1)"}}, {x}) ==
        "layer: shape (-1, -1) does not fit input of shape (2, 3, 4): only one dimension can "
        "be -1");
  CHECK(infer_error("Reshape", {{"shape", "(0, 0, 0, 0)"}}, {x}) ==
        "layer: shape (0, 0, 0, 0) does not fit input of shape (2, 3, 4): code 0 has no input "
        "dimension left to copy");
  CHECK(infer_error("Reshape", {{"shape", "(-4, 3, -1, -2)"}}, {x}) ==
        "layer: shape (-4, 3, -1, -2) does not fit input of shape (2, 3, 4): -4 cannot split "
        "input dimension 2 into 3 x -1");
  CHECK(infer_error("Reshape", {{"shape", "(-3, -3)"}}, {x}) ==
        "layer: shape (-3, -3) does not fit input of shape (2, 3, 4): code -3 needs two input "
        "dimensions to merge");
  CHECK(infer_error("Reshape", {{"shape", "(-5, 2)"}}, {x}) ==
        "layer: shape (-5, 2) does not fit input of shape (2, 3, 4): invalid code -5 (codes "
        "are 0, -1, -2, -3 and -4)");
  CHECK(infer_error("Reshape", {{"target_shape", "(0, 4)"}, {"keep_highest", "True"}}, {x}) ==
        "layer: cannot reshape input of shape (2, 3, 4) (24 elements) to (2, 4) (8 elements)");
  CHECK(infer_error("Reshape", {}, {Shape{2, -1, 4}}, {Shape{6, 5}}) ==
        "layer: input of shape (2, -1, 4) cannot hold the 30 elements of output (6, 5)");
  CHECK(infer_error("Reshape", {{"shape", "(6, 4)"}}, {x}, {Shape{4, 6}}) ==
        "layer: output: shape (4, 6) conflicts with (6, 4)");
  CHECK(infer_error("Concat", {{"num_args", "2"}}, {x, Shape{2, 3, 5}}) ==
        "layer: input 'arg1' has shape (2, 3, 5) but the arrays must match (2, -1, 4) outside "
        "axis 1");
  CHECK(infer_error("Concat", {{"num_args", "2"}, {"dim", "3"}}, {x, x}) ==
        "layer: axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
  CHECK(infer_error("sum", {{"axis", "3"}}, {x}) ==
        "layer: axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
  CHECK(infer_error("mean", {{"axis", "(1, -2)"}}, {x}) ==
        "layer: axis (1, -2) names axis 1 twice");
  CHECK(infer_error("argmax", {{"axis", "-4"}}, {x}) ==
        "layer: axis -4 is out of range for an array of 3 dimensions (shape (2, 3, 4))");
  CHECK(infer_error("softmax", {{"axis", "2"}}, {Shape{2, 3}}) ==
        "layer: axis 2 is out of range for an array of 2 dimensions (shape (2, 3))");
  CHECK(infer_error("broadcast_add", {}, {Shape{2, 3}, Shape{4, 3}}) ==
        "layer: operands could not be broadcast together with shapes (2, 3) and (4, 3)");
  CHECK(infer_error("dot", {}, {Shape{3, 4}, Shape{5}}) ==
        "layer: dot shape error: (3, 4) X (5,) (transpose_a=False, transpose_b=False)");
  CHECK(infer_error("dot", {{"transpose_a", "True"}}, {Shape{4}, Shape{4}}) ==
        "layer: dot cannot transpose vectors");
  CHECK(infer_error("batch_dot", {}, {Shape{3, 4}, Shape{4, 6}}) ==
        "layer: batch_dot needs inputs with the same number (>= 3) of dimensions: (3, 4) X (4, "
        "6) (transpose_a=False, transpose_b=False)");
  CHECK(infer_error("batch_dot", {}, {Shape{2, 3, 4}, Shape{3, 4, 6}}) ==
        "layer: batch_dot: the leading (batch) dimensions must be equal: (2, 3, 4) X (3, 4, 6) "
        "(transpose_a=False, transpose_b=False)");
  CHECK(infer_error("batch_dot", {}, {Shape{2, 3, 4}, Shape{2, 5, 6}}) ==
        "layer: batch_dot: the contracted dimensions differ: (2, 3, 4) X (2, 5, 6) "
        "(transpose_a=False, transpose_b=False)");
  CHECK(infer_error("dot", {{"forward_stype", "csr"}}, {Shape{2, 2}, Shape{2, 2}}) ==
        "layer: forward_stype: sparse outputs are not supported (mx arrays are dense)");
  CHECK(infer_error("SliceChannel", {{"num_outputs", "2"}}, {x}) ==
        "layer: cannot split axis 1 of input (2, 3, 4) into num_outputs=2 equal parts");
  CHECK(
      infer_error("split", {{"num_outputs", "2"}, {"axis", "-1"}, {"squeeze_axis", "True"}}, {x}) ==
      "layer: squeeze_axis needs axis 2 of input (2, 3, 4) to have num_outputs=2 elements, but "
      "it has 4");
  CHECK(infer_error("slice_axis", {{"axis", "1"}, {"begin", "0"}, {"end", "5"}}, {x}) ==
        "layer: end 5 is out of range for axis 1 of size 3");
  CHECK(infer_error("slice_axis", {{"axis", "1"}, {"begin", "2"}, {"end", "1"}}, {x}) ==
        "layer: begin 2 must come before end 1 on axis 1 of size 3");
  CHECK(infer_error("slice_axis", {{"axis", "1"}, {"begin", "-5"}, {"end", "None"}}, {x}) ==
        "layer: begin -5 is out of range for axis 1 of size 3");
  CHECK(infer_error("transpose", {{"axes", "(0, 0, 1)"}}, {x}) ==
        "layer: axes (0, 0, 1) is not a permutation: axis 0 appears twice");
  CHECK(infer_error("transpose", {{"axes", "(0, 1)"}}, {x}) ==
        "layer: axes (0, 1) has 2 entries but the array has 3 dimensions");
  CHECK(infer_error("expand_dims", {{"axis", "4"}}, {x}) ==
        "layer: axis 4 is out of range [-4, 3] for an input of 3 dimensions");
  CHECK(infer_error("SoftmaxOutput", {{"multi_output", "True"}},
                    {Shape{4, 3, 5, 6}, Shape{4, 5, 7}}) ==
        "layer: input 'label' has shape (4, 5, 7) but multi_output expects (4, 30) or (4, 5, 6)");
  CHECK(infer_error("SoftmaxOutput", {}, {Shape{4, 3}, Shape{5}}) ==
        "layer: input 'label': shape (5,) conflicts with (4,)");
  CHECK(infer_error("LinearRegressionOutput", {}, {Shape{4, 3}, Shape{4, 2}}) ==
        "layer: input 'label' has shape (4, 2) but must hold one label per output of (4, 3)");
  CHECK(infer_error("log_softmax", {{"use_length", "True"}}, {Shape{2, 3}}) ==
        "layer: use_length is not supported by log_softmax (it takes no length)");
}

TEST_CASE("parameter errors") {
  CHECK(param_error("SoftmaxOutput", {{"normalization", "bach"}}) ==
        "layer: parameter 'normalization': 'bach' is not one of {'null', 'batch', 'valid'} (did "
        "you mean 'batch'?)");
  CHECK(param_error("Cast", {{"dtype", "bool"}}) ==
        "layer: parameter 'dtype': unknown dtype 'bool' (expected float32, float64, float16, "
        "uint8, int32, int8, int64 or bfloat16)");
  CHECK(param_error("Reshape", {{"shape", "(2, x)"}}) ==
        "layer: parameter 'shape': cannot parse integer tuple '(2, x)': unexpected character "
        "'x' at position 4");
  CHECK(param_error("slice_axis", {{"axis", "0"}, {"begin", "1"}}) ==
        "layer: required parameter 'end' (int) is missing: One past the last index; negative "
        "counts from the end, None is the end.");
  CHECK(param_error("Concat", {{"num_args", "0"}}) ==
        "layer: parameter 'num_args': 0 is out of range; allowed [1, inf)");
  CHECK(param_error("sum", {{"axis", "(0, 1"}}) ==
        "layer: parameter 'axis': cannot parse integer tuple '(0, 1': missing closing ')'");
  // MXNet's attribute spellings parse and print back.
  OpInstance sum("sum", {{"axis", "(0, -1)"}, {"keepdims", "True"}});
  CHECK(sum.attrs().at("axis") == "(0, -1)");
  CHECK(OpInstance("sum", {{"axis", "1"}}).attrs().at("axis") == "(1,)");
  CHECK(OpInstance("sum", {}).attrs().at("axis") == "None");
  CHECK(OpInstance("slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "None"}})
            .attrs()
            .at("end") == "None");
}

TEST_CASE("runtime errors: unsupported element types") {
  NDArray ints = NDArray::zeros({2, 2}, Context::cpu(), DType::kInt32);
  auto y = op::invoke("sum", {ints});
  CHECK_THROWS_WITH_AS(y[0].wait_to_read(),
                       "in operation 'sum': sum supports float32 and float64, not int32", Error);
  auto z = op::invoke("broadcast_add", {ints, ints});
  CHECK_THROWS_AS(z[0].wait_to_read(), Error);
}

TEST_CASE("every tensor and output operator is registered with MXNet's names") {
  const auto& r = op::OpRegistry::get();
  const std::vector<std::string> names = {"SoftmaxOutput",
                                          "Softmax",
                                          "LinearRegressionOutput",
                                          "LogisticRegressionOutput",
                                          "MAERegressionOutput",
                                          "softmax",
                                          "log_softmax",
                                          "Concat",
                                          "concat",
                                          "Flatten",
                                          "flatten",
                                          "Reshape",
                                          "reshape",
                                          "transpose",
                                          "expand_dims",
                                          "SliceChannel",
                                          "split",
                                          "slice_axis",
                                          "broadcast_add",
                                          "broadcast_plus",
                                          "broadcast_sub",
                                          "broadcast_minus",
                                          "broadcast_mul",
                                          "broadcast_div",
                                          "broadcast_maximum",
                                          "broadcast_minimum",
                                          "sum",
                                          "sum_axis",
                                          "mean",
                                          "max",
                                          "max_axis",
                                          "min",
                                          "min_axis",
                                          "dot",
                                          "batch_dot",
                                          "Cast",
                                          "cast",
                                          "one_hot",
                                          "argmax"};
  for (const std::string& name : names) {
    CAPTURE(name);
    const op::OpDef* def = r.lookup(name);
    REQUIRE(def != nullptr);
    CHECK(!def->description.empty());
  }
  for (const char* loss : {"SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
                           "MAERegressionOutput"})
    CHECK(r.find(loss).is_loss);
  CHECK_FALSE(r.find("softmax").is_loss);
}
