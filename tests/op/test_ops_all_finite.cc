// all_finite and multi_all_finite: their values against MXNet 1.9.1 (cases of
// the tensor family, scripts/fixtures/op_cases/tensor.py), and the cases
// MXNet's fixtures cannot hold (many arrays, mixed types, bfloat16,
// init_output=False), on the CPU and on the harness's device.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "op/invoke.h"
#include "op/registry.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;

namespace {

// The flag for `arrays` (copied to `device`) with init_output, or written
// over `prior` without it.
float flag_of(const std::vector<NDArray>& arrays, Context device, bool init_output = true,
              float prior = 0.5f) {
  std::vector<NDArray> in;
  for (const NDArray& a : arrays) in.push_back(a.copy_to(device));
  NDArray out = NDArray::full(Shape{1}, prior, device);
  op::OpInstance op("multi_all_finite", {{"num_arrays", std::to_string(arrays.size())},
                                         {"init_output", init_output ? "True" : "False"}});
  op::invoke_forward(op, in, {}, {out}, {op::OpReq::kWrite}, false);
  return out.to_vector<float>()[0];
}

NDArray with_value(DType dtype, int64_t n, int64_t at, double value) {
  std::vector<double> v(static_cast<size_t>(n), 0.25);
  if (at >= 0) v[static_cast<size_t>(at)] = value;
  return op::invoke("Cast", {NDArray::from_vector<double>(Shape{n}, v)},
                    {{"dtype", dtype_name(dtype)}})[0];
}

}  // namespace

TEST_CASE("reference: all_finite and multi_all_finite against MXNet 1.9.1") {
  int checked = 0;
  for (const auto& c : load_reference_cases("tensor"))
    if (c.op == "all_finite" || c.op == "multi_all_finite") {
      check_reference(c, 1e-6, 1e-6);  // 0 or 1
      ++checked;
    }
  CHECK(checked == 6);
}

TEST_CASE("reference: multi_all_finite over many arrays and every float type, on each device") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (Context device : {Context::cpu(), harness_device()}) {
    if (device.is_gpu() && !gpu_present()) continue;
    const std::string where = device.to_string();
    CAPTURE(where);
    for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      const std::string type = dtype_name(dtype);
      CAPTURE(type);
      // 40 arrays: more than one GPU launch holds; the bad value in the last.
      std::vector<NDArray> arrays;
      for (int i = 0; i < 40; ++i) arrays.push_back(with_value(dtype, 1 + 97 * i, -1, 0));
      CHECK(flag_of(arrays, device) == 1.0f);
      for (double bad : {inf, -inf, nan}) {
        arrays.back() = with_value(dtype, 5000, 4999, bad);
        CHECK(flag_of(arrays, device) == 0.0f);
      }
      // A value float16 cannot hold is infinite there, finite in float32.
      const float large = flag_of({with_value(dtype, 3, 1, 1e6)}, device);
      CHECK(large == (dtype == DType::kFloat16 ? 0.0f : 1.0f));
    }
    // Mixed types in one call, as MXNet refuses and mx allows.
    CHECK(flag_of({with_value(DType::kFloat32, 4, -1, 0), with_value(DType::kFloat16, 4, 2, nan)},
                  device) == 0.0f);
    // init_output=False keeps the prior value unless something is not finite.
    CHECK(flag_of({with_value(DType::kFloat32, 4, -1, 0)}, device, false, 0.5f) == 0.5f);
    CHECK(flag_of({with_value(DType::kFloat32, 4, 0, inf)}, device, false, 0.5f) == 0.0f);
    // Empty arrays are all finite.
    CHECK(flag_of({NDArray::zeros(Shape{0})}, device) == 1.0f);
  }
}

TEST_CASE("all_finite and multi_all_finite refuse integer inputs and have no gradient") {
  op::OpInstance op("all_finite", {});
  op::DTypeVector in{DType::kInt32}, aux, out(1);
  CHECK_THROWS_WITH_AS(op.infer_type(in, aux, out),
                       doctest::Contains("the inputs are float16, bfloat16, float32 or float64"),
                       InputError);
  CHECK_FALSE(op::OpRegistry::get().find("multi_all_finite").has_backward());
}
