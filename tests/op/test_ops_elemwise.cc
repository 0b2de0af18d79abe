#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "op_harness.h"

using namespace mx;
using namespace mx::test;

TEST_CASE("gradients: element-wise binary operators") {
  GradientCheckOptions o;
  o.min_abs = 0.2;  // keep divisors away from 0
  for (const char* name : {"elemwise_add", "elemwise_sub", "elemwise_mul", "elemwise_div"})
    check_gradient(name, {}, {Shape{3, 4}, Shape{3, 4}}, o);
}

TEST_CASE("gradients: operators with a scalar") {
  GradientCheckOptions positive;
  positive.low = 0.5;
  positive.high = 2.0;
  for (const char* name : {"_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar",
                           "_div_scalar", "_rdiv_scalar", "_power_scalar", "_rpower_scalar"})
    check_gradient(name, {{"scalar", "1.7"}}, {Shape{2, 5}}, positive);
  GradientCheckOptions away;
  away.min_abs = 0.1;
  check_gradient("_maximum_scalar", {{"scalar", "0.05"}}, {Shape{20}}, away);
  check_gradient("_minimum_scalar", {{"scalar", "0.05"}}, {Shape{20}}, away);
}

TEST_CASE("gradients: unary math") {
  GradientCheckOptions any;
  any.min_abs = 0.05;  // relu and abs have a kink at 0
  for (const char* name : {"relu", "sigmoid", "tanh", "exp", "square", "abs", "negative", "_copy"})
    check_gradient(name, {}, {Shape{4, 6}}, any);
  GradientCheckOptions positive;
  positive.low = 0.3;
  positive.high = 3.0;
  for (const char* name : {"log", "sqrt", "reciprocal"})
    check_gradient(name, {}, {Shape{4, 6}}, positive);
}

TEST_CASE("gradients: add_n, clip, BlockGrad, zeros_like") {
  check_gradient("add_n", {{"num_args", "3"}}, {Shape{2, 3}, Shape{2, 3}, Shape{2, 3}});
  check_gradient("ElementWiseSum", {{"num_args", "2"}}, {Shape{4}, Shape{4}});
  GradientCheckOptions away;
  away.min_abs = 0.05;
  check_gradient("clip", {{"a_min", "-0.5"}, {"a_max", "0.6"}}, {Shape{30}}, away);
  check_gradient("zeros_like", {}, {Shape{5}});
  check_gradient("ones_like", {}, {Shape{5}});
}

namespace {
const char* const kLogicKinds[] = {"equal",         "not_equal",  "greater",
                                   "greater_equal", "lesser",     "lesser_equal",
                                   "logical_and",   "logical_or", "logical_xor"};
}  // namespace

// Piecewise constant: the finite differences are 0, and so must be the
// gradients (MXNet's MakeZeroGradNodes).
TEST_CASE("gradients: comparison and logical operators are zero") {
  for (const char* kind : kLogicKinds) {
    const std::string name = kind;
    CAPTURE(name);
    check_gradient("_" + name, {}, {Shape{3, 4}, Shape{3, 4}});
    check_gradient("_" + name + "_scalar", {{"scalar", "0.3"}}, {Shape{2, 5}});
  }
  check_gradient("logical_not", {}, {Shape{4, 3}});
}

TEST_CASE("comparisons give 1 or 0 and a zero gradient, whatever the output's gradient") {
  const double nan = std::nan("");
  NDArray a = NDArray::from_vector<double>({4}, {1, 2, nan, 0});
  NDArray b = NDArray::from_vector<double>({4}, {1, 3, nan, -1});
  op::OpInstance greater_equal("_greater_equal", {});
  CHECK(op::invoke(greater_equal, {a, b})[0].to_vector<double>() ==
        std::vector<double>{1, 0, 0, 1});
  op::OpInstance not_equal("_not_equal", {});
  auto y = op::invoke(not_equal, {a, b});
  CHECK(y[0].to_vector<double>() == std::vector<double>{0, 1, 1, 1});
  op::OpInstance lnot("logical_not", {});
  CHECK(op::invoke(lnot, {a})[0].to_vector<double>() == std::vector<double>{0, 0, 0, 1});
  // An infinite or NaN output gradient still gives exactly 0 (not 0 * inf).
  NDArray ga = NDArray::full({4}, 9.0, Context::cpu(), DType::kFloat64);
  NDArray gb = NDArray::full({4}, 9.0, Context::cpu(), DType::kFloat64);
  NDArray g = NDArray::from_vector<double>({4}, {1, nan, INFINITY, -1});
  op::invoke_backward(not_equal, {g}, {a, b}, y, {}, {ga, gb},
                      {op::OpReq::kWrite, op::OpReq::kWrite});
  CHECK(ga.to_vector<double>() == std::vector<double>{0, 0, 0, 0});
  CHECK(gb.to_vector<double>() == std::vector<double>{0, 0, 0, 0});
}

TEST_CASE("reference: comparison and logical operators against MXNet 1.9.1") {
  auto cases = load_reference_cases("logic");
  CHECK(cases.size() >= 40);
  for (const auto& c : cases) check_reference(c);
}

TEST_CASE("gradients: Activation and FullyConnected") {
  GradientCheckOptions away;
  away.min_abs = 0.05;
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu", "softsign"})
    check_gradient("Activation", {{"act_type", act}}, {Shape{3, 7}}, away);
  check_gradient("FullyConnected", {{"num_hidden", "5"}}, {Shape{4, 3, 2}, Shape{5, 6}, Shape{5}});
  check_gradient("FullyConnected", {{"num_hidden", "3"}, {"no_bias", "True"}},
                 {Shape{2, 4}, Shape{3, 4}});
  check_gradient("FullyConnected", {{"num_hidden", "3"}, {"flatten", "False"}},
                 {Shape{2, 3, 4}, Shape{3, 4}, Shape{3}});
  // Large enough that the product is split over threads.
  GradientCheckOptions big;
  big.max_checks_per_input = 20;
  check_gradient("FullyConnected", {{"num_hidden", "64"}},
                 {Shape{64, 300}, Shape{64, 300}, Shape{64}}, big);
  // Many rows: the GPU's bias gradient splits each column's rows.
  check_gradient("FullyConnected", {{"num_hidden", "40"}}, {Shape{700, 5}, Shape{40, 5}, Shape{40}},
                 big);
  // oneDNN takes layers of 32 outputs or more (fc_worth_it): no bias, no flatten.
  check_gradient("FullyConnected",
                 {{"num_hidden", "40"}, {"no_bias", "True"}, {"flatten", "False"}},
                 {Shape{2, 3, 4}, Shape{40, 4}}, big);
}

TEST_CASE("BlockGrad passes values and stops the gradient") {
  NDArray x = NDArray::from_vector<double>({3}, {1, -2, 3});
  op::OpInstance block("BlockGrad", {});
  auto y = op::invoke(block, {x});
  CHECK(y[0].to_vector<double>() == std::vector<double>{1, -2, 3});
  NDArray g = NDArray::full({3}, 9.0, Context::cpu(), DType::kFloat64);
  op::invoke_backward(block, {NDArray::full({3}, 1.0, Context::cpu(), DType::kFloat64)}, {x}, y, {},
                      {g}, {op::OpReq::kWrite});
  CHECK(g.to_vector<double>() == std::vector<double>{0, 0, 0});
}

TEST_CASE("reference: element-wise, FullyConnected and Activation against MXNet 1.9.1") {
  auto cases = load_reference_cases("elemwise");
  CHECK(cases.size() >= 30);
  for (const auto& c : cases) check_reference(c);
}
