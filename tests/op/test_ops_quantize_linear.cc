// QuantizeLinear (ONNX's operator): values from ONNX Runtime (fixtures made
// by scripts/fixtures/make_op_fixtures.py quantize), ties, saturation and
// NaN worked out by hand, and its refusals. It has no gradient, so no
// gradient check. On a GPU (test_ops_gpu) the same reference cases run on
// gpu:0.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "error_text.h"
#include "op/invoke.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;

TEST_CASE("reference: QuantizeLinear against ONNX Runtime") {
  auto cases = load_reference_cases("quantize");
  CHECK(cases.size() == 5);
  // Integers: a difference of one step is 1000 times the tolerance.
  for (const auto& c : cases) check_reference(c, 0.0, 1e-3);
}

TEST_CASE("QuantizeLinear rounds half to even, saturates, and gives 0 for NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const NDArray x =
      NDArray::from_vector<float>(Shape{8}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 400.0f, -400.0f, nan});
  const NDArray scale = NDArray::from_vector<float>(Shape{1}, {1.0f});
  SUBCASE("uint8, zero point 3") {
    const NDArray zero = NDArray::from_vector<uint8_t>(Shape{1}, {3});
    const NDArray y = op::invoke("QuantizeLinear", {x, scale, zero})[0];
    CHECK(y.dtype() == DType::kUint8);
    CHECK(y.to_vector<uint8_t>() == std::vector<uint8_t>{3, 5, 5, 3, 1, 255, 0, 0});
  }
  SUBCASE("int8, zero point 0") {
    const NDArray zero = NDArray::from_vector<int8_t>(Shape{1}, {0});
    const NDArray y = op::invoke("QuantizeLinear", {x, scale, zero})[0];
    CHECK(y.dtype() == DType::kInt8);
    CHECK(y.to_vector<int8_t>() == std::vector<int8_t>{0, 2, 2, 0, -2, 127, -128, 0});
  }
}

TEST_CASE("QuantizeLinear refuses scales that do not fit and zero points that are not 8-bit") {
  const NDArray x = NDArray::from_vector<float>(Shape{2, 3}, {0, 1, 2, 3, 4, 5});
  const NDArray two = NDArray::from_vector<float>(Shape{2}, {1.0f, 2.0f});
  const NDArray two_zeros = NDArray::from_vector<uint8_t>(Shape{2}, {0, 0});
  CHECK(error_text<InputError>([&] {
          op::invoke("QuantizeLinear", {x, two, two_zeros}, {{"axis", "1"}});
        }) == "QuantizeLinear: input 'scale' has 2 values for (2, 3) along axis 1");
  CHECK(error_text<InputError>([&] {
          op::invoke("QuantizeLinear", {x, two, two_zeros}, {{"axis", "2"}});
        }).find("axis 2 is out of range for 2-D input 'data'") != std::string::npos);
  const NDArray wide_zero = NDArray::from_vector<int32_t>(Shape{1}, {0});
  const NDArray one = NDArray::from_vector<float>(Shape{1}, {1.0f});
  CHECK(error_text<InputError>([&] {
          op::invoke("QuantizeLinear", {x, one, wide_zero});
        }).find("input 'zero_point' must be uint8 or int8, not int32") != std::string::npos);
  // Along axis 0, two scales fit.
  const NDArray y = op::invoke("QuantizeLinear", {x, two, two_zeros}, {{"axis", "0"}})[0];
  CHECK(y.to_vector<uint8_t>() == std::vector<uint8_t>{0, 1, 2, 2, 2, 2});
}
