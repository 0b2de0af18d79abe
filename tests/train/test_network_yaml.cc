#include <doctest/doctest.h>

#include "base/error.h"
#include "train/network_yaml.h"

using namespace mx;
using namespace mx::train;

namespace {

graph::Symbol build(const std::string& text) { return build_network(YAML::Load(text), "net.yaml"); }

std::string error_of(const std::string& text) {
  try {
    build(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("expressions in ${...}") {
  std::map<std::string, std::string> v{{"filters", "256"}, {"act", "relu"}, {"project", "True"}};
  CHECK(substitute("${filters / 4}", v, "x") == "64");
  CHECK(substitute("(${filters // 3}, 1)", v, "x") == "(85, 1)");
  CHECK(substitute("${act}", v, "x") == "relu");
  CHECK(substitute("${project}", v, "x") == "True");
  CHECK(substitute("${(filters + 2) * 0.5}", v, "x") == "129");
  CHECK(substitute("${filters > 100}", v, "x") == "1");
  CHECK(substitute("${1.5 * 3}", v, "x") == "4.5");
  CHECK_THROWS_WITH_AS(
      substitute("${filtrs * 2}", v, "net.yaml:3:5"),
      "net.yaml:3:5: in expression 'filtrs * 2': unknown name 'filtrs' (did you mean 'filters'?)",
      InputError);
  CHECK_THROWS_AS(substitute("${filters / 0}", v, "x"), InputError);
  CHECK_THROWS_AS(substitute("${act * 2}", v, "x"), InputError);
  CHECK_THROWS_AS(substitute("${filters", v, "x"), InputError);
}

TEST_CASE("a sequential network in a few lines") {
  auto net = build(R"(
layers:
  - {op: FullyConnected, name: fc1, num_hidden: 16}
  - {op: Activation, act_type: relu}
  - {op: FullyConnected, name: fc2, num_hidden: 10}
)");
  CHECK(net.list_arguments() ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"});
  CHECK(net.get_internals().list_outputs()[4] == "activation0_output");
  auto s = net.infer_shape({{"data", Shape{8, 20}}});
  CHECK(s.outputs[0] == Shape{8, 10});
}

TEST_CASE("named inputs, blocks with parameters, repeat and first-repetition overrides") {
  auto net = build(R"(
blocks:
  residual:
    params: {units: 8, scale: 1, act: relu}
    layers:
      - {op: FullyConnected, name: fc, num_hidden: "${units}"}
      - {op: Activation, name: act, act_type: "${act}"}
      - {op: _mul_scalar, name: scaled, scalar: "${scale * 0.5}"}
      - {op: elemwise_add, name: add, inputs: [scaled, input]}
layers:
  - {op: FullyConnected, name: stem, num_hidden: 8}
  - {block: residual, name: unit, repeat: 3, act: tanh, first: {scale: 4}}
  - {op: FullyConnected, name: head, num_hidden: 2, inputs: [unit2]}
)");
  auto args = net.list_arguments();
  CHECK(args == std::vector<std::string>{"data", "stem_weight", "stem_bias", "unit1_fc_weight",
                                         "unit1_fc_bias", "unit2_fc_weight", "unit2_fc_bias",
                                         "head_weight", "head_bias"});
  auto internals = net.get_internals();
  CHECK(internals["unit1_scaled_output"].get_internals().list_outputs().size() > 0);
  // The first repetition got scale 4 (x2.0), later ones the default 1 (x0.5).
  auto first = internals["unit1_scaled_output"];
  CHECK(first.outputs()[0].node->attrs.at("scalar") == "2");
  CHECK(internals["unit2_scaled_output"].outputs()[0].node->attrs.at("scalar") == "0.5");
  CHECK(internals["unit2_act_output"].outputs()[0].node->attrs.at("act_type") == "tanh");
  CHECK(net.infer_shape({{"data", Shape{4, 3}}}).outputs[0] == Shape{4, 2});
}

TEST_CASE("`when` includes a layer conditionally; multi-output references; groups") {
  auto net = build(R"(
blocks:
  maybe:
    params: {extra: false}
    layers:
      - {op: relu, name: r}
      - {op: negative, name: n, when: "${extra}"}
layers:
  - {op: FullyConnected, name: fc, num_hidden: 4}
  - {block: maybe, name: a}
  - {block: maybe, name: b, extra: true}
outputs: [a, b]
)");
  CHECK(net.list_outputs() == std::vector<std::string>{"a_r_output", "b_n_output"});
}

TEST_CASE("network errors carry file:line:column and the closest valid name") {
  CHECK(error_of("layers:\n  - {op: FullyConected, num_hidden: 4}\n") ==
        "net.yaml:2:10: unknown operator 'FullyConected' (did you mean 'FullyConnected'?) (mx-ops "
        "lists them all)");
  CHECK(error_of("layers:\n  - {op: FullyConnected, num_hiden: 4}\n") ==
        "net.yaml:2:5: node 'fullyconnected0' (FullyConnected): unknown parameter 'num_hiden' (did "
        "you mean "
        "'num_hidden'?); parameters are: num_hidden, no_bias, flatten");
  CHECK(error_of("layers:\n  - {op: relu}\n  - {op: elemwise_add, inputs: [relu0, dta]}\n") ==
        "net.yaml:3:40: no layer or input named 'dta' before this point (did you mean 'data'?)");
  CHECK(error_of("layer:\n  - {op: relu}\n") ==
        "net.yaml:1:1: unknown key 'layer' in network (did you mean 'layers'?); allowed: inputs, "
        "blocks, layers, outputs");
  CHECK(error_of("blocks:\n  b: {params: {n: 1}, layers: [{op: relu}]}\nlayers:\n  - {block: b, m: "
                 "2}\n") ==
        "net.yaml:4:16: block 'b' has no parameter 'm' (did you mean 'n'?); its parameters: n");
  CHECK(error_of("layers:\n  - {op: FullyConnected, num_hidden: \"${x}\"}\n") ==
        "net.yaml:2:38: in expression 'x': unknown name 'x'");
  CHECK(error_of("layers: []\n") == "net.yaml:1:1: the network needs a non-empty list of 'layers'");
  // An empty 'inputs' (a block's layers then had no input at all: a crash the fuzzer found).
  const std::string block = "blocks:\n  b: {layers: [{op: relu}]}\nlayers:\n";
  for (const char* inputs : {"inputs:,", "inputs: [],", "inputs: {a: 1},"}) {
    INFO(inputs);
    CHECK(error_of(block + "  - {block: b, " + inputs + " name: x}\n")
              .find("'inputs' must name a layer or list layers") != std::string::npos);
    CHECK(error_of(std::string("layers:\n  - {op: relu, ") + inputs + " name: x}\n")
              .find("'inputs' must name a layer or list layers") != std::string::npos);
  }
}

TEST_CASE("Concat and add_n count their inputs; an explicit num_args must agree") {
  auto net = build(R"(
inputs: [a, b, c]
layers:
  - {op: Concat, name: cat, inputs: [a, b, c], dim: 1}
  - {op: add_n, name: sum, inputs: [cat, cat]}
)");
  auto s = net.infer_shape({{"a", Shape{2, 3}}, {"b", Shape{2, 4}}, {"c", Shape{2, 1}}});
  CHECK(s.outputs[0] == Shape{2, 8});
  // The same with an explicit, agreeing num_args.
  CHECK(error_of(R"(
inputs: [a, b]
layers:
  - {op: Concat, inputs: [a, b], num_args: 2}
)") == "no error");
  CHECK(error_of(R"(
inputs: [a, b]
layers:
  - {op: Concat, inputs: [a, b], num_args: 3}
)") == "net.yaml:4:44: num_args is 3 but the layer has 2 inputs; leave num_args out to count "
       "the inputs");
}

TEST_CASE("expressions and repeats have limits instead of hanging or exhausting memory") {
  const std::map<std::string, std::string> v{{"n", "3"}};
  CHECK(substitute("${" + std::string(60, '(') + "1" + std::string(60, ')') + "}", v, "x") == "1");
  CHECK_THROWS_WITH_AS(substitute("${" + std::string(100000, '(') + "1}", v, "net.yaml:2:3"),
                       doctest::Contains("net.yaml:2:3: in expression '((((("), InputError);
  CHECK_THROWS_WITH_AS(substitute("${" + std::string(100000, '-') + "1}", v, "x"),
                       doctest::Contains("': nested deeper than 64 levels"), InputError);
  CHECK_THROWS_WITH_AS(
      substitute("${1e308 * 10}", v, "net.yaml:2:3"),
      "net.yaml:2:3: in expression '1e308 * 10': the result is not a finite number", InputError);

  CHECK(error_of("layers:\n  - {op: relu, repeat: 1000000000}\n") ==
        "net.yaml:2:24: repeat must be a whole number from 0 to 10000, not '1000000000'");
  CHECK(error_of("layers:\n  - {op: relu, repeat: -1}\n") ==
        "net.yaml:2:24: repeat must be a whole number from 0 to 10000, not '-1'");
  CHECK(error_of("layers:\n  - {op: relu, repeat: 2.5}\n") ==
        "net.yaml:2:24: repeat must be a whole number from 0 to 10000, not '2.5'");
  CHECK(error_of("layers:\n  - {op: relu, repeat: many}\n") ==
        "net.yaml:2:24: repeat must be a whole number from 0 to 10000, not 'many'");
  // Repeats multiply through nested blocks: 10000 x 10000 layers is an error, not a hang.
  CHECK(error_of(R"(blocks:
  inner: {layers: [{op: relu, repeat: 10000}]}
layers:
  - {block: inner, repeat: 10000}
)") == "net.yaml:2:20: the network has more than 100000 layers (repeat counts multiply in "
       "repeated blocks)");
  CHECK(build("layers:\n  - {op: relu, repeat: 3}\n").name() == "relu2");
}

TEST_CASE("a block that uses itself is an error, not endless recursion") {
  CHECK(error_of("blocks:\n  a: {params: {x: 1}}\nlayers:\n  - {block: a}\n") ==
        "net.yaml:2:6: block 'a' needs a list of 'layers'");
  CHECK(error_of(R"(blocks:
  a: {layers: [{block: b}]}
  b: {layers: [{op: relu}, {block: a}]}
layers:
  - {block: a}
)") == "net.yaml:3:36: block 'a' uses itself (a -> b -> a)");
  CHECK(error_of("layers:\n  - {op: relu}\n  - {op: relu, inputs: 'relu0[x]'}\n") ==
        "net.yaml:3:24: 'relu0[x]': the output index in [...] must be a whole number");
}
