#include <doctest/doctest.h>

#include "base/error.h"
#include "op/invoke.h"
#include "op/nn/batch_norm_param.h"
#include "op/nn/fully_connected_param.h"
#include "op/registry.h"

using namespace mx;
using namespace mx::op;

TEST_CASE("registry finds operators by name and alias and suggests close names") {
  const auto& r = OpRegistry::get();
  CHECK(r.find("FullyConnected").name == "FullyConnected");
  CHECK(r.find("add_n").name == "ElementWiseSum");
  CHECK(r.find("stop_gradient").name == "BlockGrad");
  CHECK_THROWS_WITH_AS(r.find("FullyConected"),
                       "unknown operator 'FullyConected' (did you mean 'FullyConnected'?)",
                       InputError);
  auto all = r.list();
  CHECK(all.size() >= 30);
  CHECK(std::is_sorted(all.begin(), all.end(), [](auto* a, auto* b) { return a->name < b->name; }));
  for (const OpDef* def : all) {
    CAPTURE(def->name);
    CHECK(!def->description.empty());
    CHECK(def->has_kernel(DeviceKind::kCPU));
  }
}

TEST_CASE("operator parameters are validated with the layer named") {
  CHECK_THROWS_WITH_AS(OpInstance("FullyConnected", {{"num_hiden", "10"}}, "FullyConnected 'fc1'"),
                       "FullyConnected 'fc1': unknown parameter 'num_hiden' (did you mean "
                       "'num_hidden'?); parameters are: num_hidden, no_bias, flatten",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("FullyConnected", {}, "fc1"),
                       "fc1: required parameter 'num_hidden' (int) is missing: Number of hidden "
                       "units (output features).",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("Activation", {{"act_type", "rellu"}}, "act1"),
                       "act1: parameter 'act_type': 'rellu' is not one of {'relu', 'sigmoid', "
                       "'tanh', 'softrelu', 'softsign'} (did you mean 'relu'?)",
                       InputError);
  OpInstance fc("FullyConnected", {{"num_hidden", "4"}, {"no_bias", "True"}});
  CHECK(fc.input_names() == std::vector<std::string>{"data", "weight"});
  CHECK(fc.attrs().at("flatten") == "True");
}

TEST_CASE("parameters read typed through params_as, and only as the operator's own struct") {
  const OpInstance fc("FullyConnected", {{"num_hidden", "7"}, {"no_bias", "True"}}, "fc1");
  const auto& p = fc.params_as<FullyConnectedParam>();
  CHECK(p.num_hidden == 7);
  CHECK(p.no_bias);
  CHECK(p.flatten);  // the default
  CHECK_THROWS_AS(fc.params_as<BatchNormParam>(), Error);
}

TEST_CASE("shape inference fills from partial information and names conflicts") {
  OpInstance fc("FullyConnected", {{"num_hidden", "10"}}, "fc1");
  ShapeVector in{Shape{8, 3, 4}, Shape(), Shape()}, aux, out(1);
  fc.infer_shape(in, aux, out);
  CHECK(in[1] == Shape{10, 12});
  CHECK(in[2] == Shape{10});
  CHECK(out[0] == Shape{8, 10});

  ShapeVector partial{Shape{-1, 5}, Shape(), Shape()}, out2(1);
  fc.infer_shape(partial, aux, out2);
  CHECK(partial[1] == Shape{10, 5});
  CHECK(out2[0] == Shape{-1, 10});

  ShapeVector bad{Shape{8, 12}, Shape{10, 11}, Shape()}, out3(1);
  CHECK_THROWS_WITH_AS(fc.infer_shape(bad, aux, out3),
                       "fc1: input 'weight': shape (10, 11) conflicts with (10, 12)", InputError);

  OpInstance add("elemwise_add", {}, "plus1");
  ShapeVector ab{Shape{2, 3}, Shape{3, 2}}, o(1);
  CHECK_THROWS_AS(add.infer_shape(ab, aux, o), InputError);
  ShapeVector back{Shape(), Shape{2, 3}}, o2(1);
  add.infer_shape(back, aux, o2);
  CHECK(back[0] == Shape{2, 3});
}

TEST_CASE("imperative invoke runs through the engine and checks its inputs") {
  NDArray x = NDArray::from_vector<float>({2, 3}, {1, -2, 3, -4, 5, -6});
  auto y = invoke("relu", {x});
  CHECK(y[0].to_vector<float>() == std::vector<float>{1, 0, 3, 0, 5, 0});
  auto z = invoke("_plus_scalar", {y[0]}, {{"scalar", "0.5"}});
  CHECK(z[0].to_vector<float>() == std::vector<float>{1.5, 0.5, 3.5, 0.5, 5.5, 0.5});
  CHECK_THROWS_WITH_AS(invoke("elemwise_add", {x}), "elemwise_add: 2 inputs expected, 1 given",
                       InputError);
  NDArray ints = NDArray::zeros({2}, Context::cpu(), DType::kInt32);
  auto bad = invoke("relu", {ints});
  CHECK_THROWS_WITH_AS(
      bad[0].wait_to_read(),
      "in operation 'relu': relu supports float32, float64 and bfloat16, not int32", Error);
}

TEST_CASE("the cost of an operator: expensive for mirroring, forward FLOPs for --dry-run") {
  const auto& r = OpRegistry::get();
  for (const char* name : {"Convolution", "Deconvolution", "FullyConnected"}) {
    CAPTURE(name);
    CHECK(r.find(name).expensive);
  }
  for (const char* name : {"Activation", "Pooling", "BatchNorm", "dot"}) {
    CAPTURE(name);
    CHECK_FALSE(r.find(name).expensive);
  }
  auto flops = [](const std::string& op, const AttrMap& attrs, const ShapeVector& in,
                  const ShapeVector& out) {
    OpInstance instance(op, attrs);
    return instance.def().forward_flops(instance.params(), in, out);
  };
  // (2, 8, 8, 8) outputs, each 3 * 3 * 3 multiply-adds.
  CHECK(flops("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
              {{2, 3, 10, 10}, {8, 3, 3, 3}, {8}}, {{2, 8, 8, 8}}) == 2.0 * (2 * 8 * 8 * 8) * 27);
  // Each of the 4 * 5 * 5 inputs spread over 2 * 3 * 3 outputs.
  CHECK(flops("Deconvolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}},
              {{1, 4, 5, 5}, {4, 2, 3, 3}}, {{1, 2, 7, 7}}) == 2.0 * 100 * 18);
  CHECK(flops("FullyConnected", {{"num_hidden", "6"}}, {{4, 5}, {6, 5}, {6}}, {{4, 6}}) ==
        2.0 * 24 * 5);
  CHECK(flops("dot", {}, {{2, 3}, {3, 4}}, {{2, 4}}) == 2.0 * 8 * 3);
  CHECK(flops("batch_dot", {}, {{5, 2, 3}, {5, 3, 4}}, {{5, 2, 4}}) == 2.0 * 40 * 3);
  // Default: one operation per output element; nothing for an unknown shape.
  CHECK(flops("Activation", {{"act_type", "relu"}}, {{3, 7}}, {{3, 7}}) == 21.0);
  CHECK(flops("Activation", {{"act_type", "relu"}}, {Shape()}, {Shape()}) == 0.0);
}
