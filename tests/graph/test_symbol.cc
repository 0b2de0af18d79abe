#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "graph/symbol.h"
#include "test_paths.h"

using namespace mx;
using namespace mx::graph;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/graph/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Shape shape_of(const nlohmann::json& j) {
  std::vector<int64_t> dims;
  for (const auto& d : j) dims.push_back(d.get<int64_t>());
  return Shape(dims);
}

std::string json_error(const std::string& text) {
  try {
    Symbol::from_json(text, "net.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("composition creates MXNet's variables, names and internals") {
  Symbol data = Symbol::variable("data");
  Symbol fc = Symbol::create("FullyConnected", "fc1", {{"num_hidden", "8"}}, {data});
  Symbol act = Symbol::create("Activation", "relu1", {{"act_type", "relu"}}, {fc});
  Symbol out =
      Symbol::create("FullyConnected", "fc2", {{"num_hidden", "3"}, {"no_bias", "True"}}, {act});
  CHECK(out.list_arguments() ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "fc2_weight"});
  CHECK(out.list_outputs() == std::vector<std::string>{"fc2_output"});
  CHECK(out.list_auxiliary_states().empty());
  Symbol internals = out.get_internals();
  CHECK(internals.list_outputs() == std::vector<std::string>{"data", "fc1_weight", "fc1_bias",
                                                             "fc1_output", "relu1_output",
                                                             "fc2_weight", "fc2_output"});
  CHECK(internals["relu1_output"].list_arguments() ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias"});
  Symbol both = Symbol::group({act, out});
  CHECK(both.list_outputs() == std::vector<std::string>{"relu1_output", "fc2_output"});
  CHECK(both[1].name() == "fc2");

  // Inputs by name; a shared weight.
  Symbol w = Symbol::variable("shared_w");
  Symbol a = Symbol::create("FullyConnected", "a", {{"num_hidden", "4"}}, {data}, {{"weight", w}});
  Symbol b = Symbol::create("FullyConnected", "b", {{"num_hidden", "4"}}, {a}, {{"weight", w}});
  CHECK(b.list_arguments() == std::vector<std::string>{"data", "shared_w", "a_bias", "b_bias"});

  auto s = out.infer_shape({{"data", Shape{5, 7}}});
  CHECK(s.complete);
  CHECK(s.arguments == std::vector<Shape>{{5, 7}, {8, 7}, {8}, {3, 8}});
  CHECK(s.outputs == std::vector<Shape>{{5, 3}});
}

TEST_CASE("composition errors name the node and what is allowed") {
  Symbol data = Symbol::variable("data");
  CHECK_THROWS_WITH_AS(
      Symbol::create("FullyConnected", "fc1", {{"num_hidden", "8"}}, {}, {{"wieght", data}}),
      "node 'fc1' (FullyConnected): no input named 'wieght' (did you mean 'weight'?); "
      "inputs are: data, weight, bias",
      InputError);
  CHECK_THROWS_WITH_AS(Symbol::create("relu", "r", {}, {data, data}),
                       "node 'r' (relu): 2 inputs given, but it takes 1 (data)", InputError);
  CHECK_THROWS_WITH_AS(Symbol::create("FullyConnected", "fc1", {{"num_hidden", "0"}}, {data}),
                       "node 'fc1' (FullyConnected): parameter 'num_hidden': 0 is out of range; "
                       "allowed [1, inf)",
                       InputError);
  Symbol fc = Symbol::create("FullyConnected", "fc1", {{"num_hidden", "8"}}, {data});
  CHECK_THROWS_WITH_AS(
      fc.infer_shape({{"fc1_weight", Shape{8, 3}}, {"data", Shape{2, 4}}}),
      "node 'fc1' (FullyConnected): input 'weight': shape (8, 3) conflicts with (8, 4)",
      InputError);
  CHECK_THROWS_WITH_AS(fc.infer_shape({{"dat", Shape{2, 4}}}),
                       "infer_shape: 'dat' is not an argument of the symbol (did you mean 'data'?)",
                       InputError);
  auto partial = fc.infer_shape({});
  CHECK_FALSE(partial.complete);
  CHECK(partial.arguments[2] == Shape{8});  // the bias is known from num_hidden alone
}

TEST_CASE("attributes: shapes from __shape__, attr get/set") {
  Symbol data = Symbol::variable("data", {{"__shape__", "(0, 6)"}});
  Symbol fc = Symbol::create("FullyConnected", "fc1", {{"num_hidden", "2"}}, {data});
  auto s = fc.infer_shape({});
  CHECK(s.arguments[1] == Shape{2, 6});  // batch unknown (0 in MXNet's legacy spelling)
  CHECK(fc.attr("num_hidden") == "2");
  fc.set_attr("__lr_mult__", "0.5");
  CHECK(fc.attr("__lr_mult__") == "0.5");
  fc.set_attr("num_hidden", "4");
  CHECK(fc.infer_shape({{"data", Shape{1, 6}}}).outputs[0] == Shape{1, 4});
  CHECK_THROWS_AS(fc.set_attr("num_hidden", "-1"), InputError);
}

TEST_CASE(
    "symbols written by MXNet 1.9.1 load, list and infer like MXNet, and save byte for byte") {
  for (const char* name :
       {"mlp", "lenet", "resblock", "inception", "multi_output", "seq_tensor", "chargpt"}) {
    CAPTURE(name);
    const std::string path = kDir + name + "-symbol.json";
    Symbol sym = Symbol::load(path);
    CHECK(sym.to_json() == read_text(path));
    auto expected = nlohmann::json::parse(read_text(kDir + name + ".expected.json"));
    CHECK(sym.list_arguments() == expected["arguments"].get<std::vector<std::string>>());
    CHECK(sym.list_auxiliary_states() == expected["aux"].get<std::vector<std::string>>());
    CHECK(sym.list_outputs() == expected["outputs"].get<std::vector<std::string>>());
    CHECK(sym.get_internals().list_outputs() ==
          expected["internals"].get<std::vector<std::string>>());
    ShapeMap known;
    for (const auto& [k, v] : expected["input_shapes"].items()) known[k] = shape_of(v);
    auto shapes = sym.infer_shape(known);
    CHECK(shapes.complete);
    for (size_t i = 0; i < shapes.arguments.size(); ++i)
      CHECK(shapes.arguments[i] == shape_of(expected["shapes"]["arguments"][i]));
    for (size_t i = 0; i < shapes.outputs.size(); ++i)
      CHECK(shapes.outputs[i] == shape_of(expected["shapes"]["outputs"][i]));
    for (size_t i = 0; i < shapes.aux.size(); ++i)
      CHECK(shapes.aux[i] == shape_of(expected["shapes"]["aux"][i]));
    // Saving and loading again gives the same text.
    CHECK(Symbol::from_json(sym.to_json()).to_json() == sym.to_json());
  }
}

TEST_CASE("old files with \"param\" and \"attr\" load and save as MXNet 1.x writes them") {
  Symbol old = Symbol::load(kDir + "old.json");
  CHECK(old.to_json() == read_text(kDir + "mlp-symbol.json"));
}

TEST_CASE("malformed symbol files give one clear message") {
  CHECK(json_error("{nodes: ]").find("net.json: not valid JSON at byte") == 0);
  CHECK(json_error("[1, 2]") == "net.json: not an MXNet symbol file (no \"nodes\" list)");
  // nlohmann's number overflow is not a parse_error (found by fuzz_symbol_json).
  CHECK(json_error("1E400").find("net.json: not valid JSON: ") == 0);
  CHECK(
      json_error(
          R"({"nodes": [{"op": "FullyConected", "name": "fc", "inputs": []}], "heads": [[0,0,0]]})") ==
      "net.json: node 0 ('fc'): unknown operator 'FullyConected' (did you mean 'FullyConnected'?)");
  CHECK(
      json_error(
          R"({"nodes": [{"op": "null", "name": "x", "inputs": [[1, 0, 0]]}], "heads": [[0,0,0]]})") ==
      "net.json: node 0 ('x'): input refers to node 1, which does not come before it");
  CHECK(json_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "relu", "name": "r", "inputs": [[0, 0, 0], [0, 0, 0]]}], "heads": [[1,0,0]]})") ==
        "net.json: node 1 ('r', relu): 2 inputs, but the operator takes 1");
  CHECK(json_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "relu", "name": "r", "inputs": [[0, 3, 0]]}], "heads": [[1,0,0]]})") ==
        "net.json: node 1 ('r'): input refers to output 3 of 'x', which has 1");
  CHECK(json_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "ten"}, "inputs": [[0,0,0],[0,0,0],[0,0,0]]}],
        "heads": [[1,0,0]]})") ==
        "net.json: node 'fc' (FullyConnected): parameter 'num_hidden': 'ten' is not an integer");
  CHECK(
      json_error(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[4,0,0]]})") ==
      "net.json: head [4, 0] refers to a missing node or output");
  CHECK(
      json_error(
          R"({"nodes": [{"op": "null", "name": "x", "attrs": {"a": 1}, "inputs": []}], "heads": [[0,0,0]]})") ==
      "net.json: node 0 ('x'): attribute 'a' must be a string");
  CHECK_THROWS_WITH_AS(Symbol::load("no-such-symbol.json"),
                       "cannot open 'no-such-symbol.json': no such file", InputError);
  // A file whose reads fail: "cannot read", not a JSON error about no text.
  if (const auto unreadable = mx::test::unreadable_file()) {
    CHECK_THROWS_WITH_AS(Symbol::load(*unreadable), ("cannot read '" + *unreadable + "'").c_str(),
                         InputError);
  } else {
    MESSAGE("skipped: this machine has no file whose reads fail");
  }
}

TEST_CASE("a Gluon RNN begin state (_zeros with a 0 dimension) takes its batch from the graph") {
  // As MXNet 1.9.1's gluon.rnn.LSTM exports it: shape (layers, 0, hidden), a
  // hidden __layout__ attribute; the 0 is filled by the operator that reads
  // the state (the RNN in an exported LSTM, elemwise_add here).
  const std::string json = R"json({"nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "_zeros", "name": "h0",
     "attrs": {"__layout__": "LNC", "dtype": "float32", "shape": "(2, 0, 5)"}, "inputs": []},
    {"op": "elemwise_add", "name": "add", "inputs": [[0, 0, 0], [1, 0, 0]]}],
    "arg_nodes": [0], "heads": [[2, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})json";
  Symbol sym = Symbol::from_json(json, "lstm-symbol.json");
  auto shapes = sym.infer_shape({{"data", Shape{2, 7, 5}}});
  CHECK(shapes.complete);
  CHECK(shapes.outputs[0] == Shape{2, 7, 5});
  auto h0 = sym.get_internals().infer_shape({{"data", Shape{2, 7, 5}}});
  CHECK(h0.outputs[1] == Shape{2, 7, 5});
  CHECK(!Symbol::from_json(json).get_internals()[1].infer_shape({}).complete);
  CHECK_THROWS_WITH_AS(
      sym.infer_shape({{"data", Shape{3, 7, 5}}}),
      "node 'add' (elemwise_add): input 1: shape (3, 7, 5) conflicts with (2, -1, 5)", InputError);
}
