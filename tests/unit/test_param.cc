#include <doctest/doctest.h>

#include <optional>

#include "base/param.h"

using namespace mx;

namespace {

enum class PoolType { kMax, kAvg, kSum };

struct ExampleParam : Params<ExampleParam> {
  Shape kernel;
  int num_filter = 0;
  float eps = 0;
  bool no_bias = false;
  PoolType pool_type = PoolType::kMax;
  std::optional<int> axis;
  DType dtype = DType::kFloat32;
  std::string name;

  static void declare(ParamDecl<ExampleParam>& d) {
    d.field("kernel", &ExampleParam::kernel).describe("Kernel size (h, w).");
    d.field("num_filter", &ExampleParam::num_filter)
        .set_range(1, 100000)
        .describe("Output channels.");
    d.field("eps", &ExampleParam::eps).set_default(1e-3f).set_lower_bound(0.0f);
    d.field("no_bias", &ExampleParam::no_bias).set_default(false);
    d.field("pool_type", &ExampleParam::pool_type)
        .set_default(PoolType::kMax)
        .add_enum("max", PoolType::kMax)
        .add_enum("avg", PoolType::kAvg)
        .add_enum("sum", PoolType::kSum);
    d.field("axis", &ExampleParam::axis).set_default(std::nullopt);
    d.field("dtype", &ExampleParam::dtype).set_default(DType::kFloat32);
    d.field("name", &ExampleParam::name).set_default("");
  }
};

std::string message_of(const std::map<std::string, std::string>& values) {
  try {
    ExampleParam::from_strings(values, "Example 'e1'");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Params parse MXNet attribute strings and fill defaults") {
  auto p = ExampleParam::from_strings({{"kernel", "(3, 3)"},
                                       {"num_filter", "64"},
                                       {"no_bias", "True"},
                                       {"pool_type", "avg"},
                                       {"axis", "-1"},
                                       {"dtype", "float16"}},
                                      "Example");
  CHECK(p.kernel == Shape{3, 3});
  CHECK(p.num_filter == 64);
  CHECK(p.eps == doctest::Approx(1e-3));
  CHECK(p.no_bias);
  CHECK(p.pool_type == PoolType::kAvg);
  CHECK(p.axis == -1);
  CHECK(p.dtype == DType::kFloat16);
}

TEST_CASE("Params print back what they parse") {
  auto p = ExampleParam::from_strings({{"kernel", "[5,5]"}, {"num_filter", "8"}, {"eps", "2e-5"}},
                                      "Example");
  auto s = p.to_strings();
  CHECK(s["kernel"] == "(5, 5)");
  CHECK(s["num_filter"] == "8");
  CHECK(s["eps"] == "2e-05");
  CHECK(s["no_bias"] == "False");
  CHECK(s["pool_type"] == "max");
  CHECK(s["axis"] == "None");
  CHECK(s["dtype"] == "float32");
  auto q = ExampleParam::from_strings(s, "Example");
  CHECK(q.to_strings() == s);
}

TEST_CASE("Params errors name the owner, the parameter, the value and what is allowed") {
  CHECK(message_of({{"kernal", "(3, 3)"}, {"num_filter", "1"}}) ==
        "Example 'e1': unknown parameter 'kernal' (did you mean 'kernel'?); parameters are: "
        "kernel, num_filter, eps, no_bias, pool_type, axis, dtype, name");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "0"}}) ==
        "Example 'e1': parameter 'num_filter': 0 is out of range; allowed [1, 100000]");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"eps", "-1"}}) ==
        "Example 'e1': parameter 'eps': -1 is out of range; allowed [0.0, inf)");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "x"}}) ==
        "Example 'e1': parameter 'num_filter': 'x' is not an integer");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"pool_type", "mx"}}) ==
        "Example 'e1': parameter 'pool_type': 'mx' is not one of {'max', 'avg', 'sum'} "
        "(did you mean 'max'?)");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"no_bias", "yes"}}) ==
        "Example 'e1': parameter 'no_bias': 'yes' is not a boolean (expected True or False)");
  CHECK(message_of({{"num_filter", "2"}}) ==
        "Example 'e1': required parameter 'kernel' (Shape(tuple)) is missing: Kernel size (h, w).");
  CHECK(message_of({{"kernel", "(3, 3)"}, {"num_filter", "99999999999"}}) ==
        "Example 'e1': parameter 'num_filter': '99999999999' does not fit the integer type");
}

TEST_CASE("Params list their fields for --help and docs") {
  auto infos = ExampleParam::field_infos();
  REQUIRE(infos.size() == 8);
  CHECK(infos[0].name == "kernel");
  CHECK(infos[0].required);
  CHECK(infos[0].type == "Shape(tuple)");
  CHECK(infos[2].default_text == "0.001");
  CHECK(infos[4].type == "{'max', 'avg', 'sum'}");
  CHECK(infos[4].default_text == "max");
  CHECK(infos[5].default_text == "None");
}

TEST_CASE("Params from YAML: lists become tuples, errors carry file:line:column") {
  YAML::Node node = YAML::Load(
      "op: Example\n"
      "kernel: [3, 3]\n"
      "num_filter: 16\n"
      "axis: null\n"
      "pool_type: avg\n");
  auto p = ExampleParam::from_yaml(node, "net.yaml", "Example 'c1'", {"op"});
  CHECK(p.kernel == Shape{3, 3});
  CHECK(p.num_filter == 16);
  CHECK_FALSE(p.axis.has_value());
  CHECK(p.pool_type == PoolType::kAvg);
  CHECK(yaml_to_attr_string(YAML::Load("[7]"), "f") == "(7,)");

  YAML::Node bad = YAML::Load("layer:\n  kernel: [3, 3]\n  num_filtr: 16\n");
  CHECK_THROWS_WITH_AS(ExampleParam::from_yaml(bad["layer"], "net.yaml", "Example 'c1'"),
                       "net.yaml:2:3: Example 'c1': unknown parameter 'num_filtr' (did you mean "
                       "'num_filter'?); parameters are: kernel, num_filter, eps, no_bias, "
                       "pool_type, axis, dtype, name",
                       InputError);
  YAML::Node nested = YAML::Load("kernel: {h: 3}\n");
  CHECK_THROWS_WITH_AS(yaml_to_attr_strings(nested, "net.yaml"),
                       "net.yaml:1:9: expected a value or a list, found a mapping", InputError);
}
