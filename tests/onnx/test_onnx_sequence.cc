// ONNX export and import of sequence models
// (scripts/fixtures/make_onnx_sequence_fixtures.py): MXNet 1.9.1 checkpoints
// of RNN layers and a BERT-style encoder run in mx as in MXNet, mx's exports
// of them (LSTM/GRU/RNN nodes, LayerNormalization or its formula, attention
// as MatMuls) give ONNX Runtime's outputs and import back, and PyTorch's
// nn.LSTM/nn.GRU exported by torch.onnx import and match ONNX Runtime.
#include <doctest/doctest.h>

#include <cmath>
#include <set>

#include "base/strings.h"
#include "error_text.h"
#include "executor/executor.h"
#include "ndarray/params_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"
#include "onnx_fixtures.h"
#include "run_model.h"
#include "test_paths.h"

using namespace mx;
namespace mxo = mx::onnx;

namespace {

std::string dir_of(const std::string& name) {
  return test::fixtures_dir() + "/onnx_seq/" + name + "/";
}

using mxo::testing::Checkpoint;
using mxo::testing::read_pb;

// MXNet's checks are as tight as float32 allows on these small networks.
void check_close(const NDArray& got, const NDArray& want, const std::string& what) {
  mxo::testing::check_close(got, want, what, 1e-5, 1e-4);
}

Checkpoint load_mxnet(const std::string& dir) {
  return mxo::testing::load_checkpoint(dir + "model", "0000");
}

using mxo::testing::run_checkpoint;

mxo::ExportOptions whole_input(const NDArray& data, int opset) {
  mxo::ExportOptions o;
  o.opset = opset;
  o.dynamic_batch = false;
  o.input_shapes["data"] = data.shape();
  o.doc = "Exported by mx-export from model-0000.params";
  return o;
}

std::multiset<std::string> op_types(const ::onnx::ModelProto& m) {
  std::multiset<std::string> ops;
  for (const auto& n : m.graph().node()) ops.insert(n.op_type());
  return ops;
}

}  // namespace

TEST_CASE("MXNet 1.9.1 RNN and encoder checkpoints: mx, MXNet and ONNX Runtime agree") {
  struct Case {
    const char* name;
    const char* onnx_op;  // the node the export must use
    int opset;
  };
  for (const Case& k :
       {Case{"lstm", "LSTM", 13}, Case{"gru", "GRU", 13}, Case{"rnn_relu", "RNN", 13},
        Case{"encoder", "MatMul", 13}, Case{"encoder", "LayerNormalization", 17}}) {
    const std::string network = k.name;
    CAPTURE(network);
    CAPTURE(k.opset);
    const std::string dir = dir_of(std::string("mxnet_") + k.name);
    const std::string suffix = k.opset == 13 ? "" : std::to_string(k.opset);
    const Checkpoint c = load_mxnet(dir);
    const NDArray input = read_pb(dir + "input_0.pb");
    const NDArray ort = read_pb(dir + "output" + suffix + "_0.pb");
    const NDArray mx_out = run_checkpoint(c, input);
    check_close(mx_out, load_params(dir + "mxnet_output.params").get("output"), "mx vs MXNet");
    // mx's export now is the file ONNX Runtime ran, and runs as it did.
    const ::onnx::ModelProto now =
        mxo::export_model(c.symbol, c.args, c.aux, whole_input(input, k.opset));
    CHECK(now.SerializeAsString() ==
          mxo::read_model(dir + "model" + suffix + ".onnx").SerializeAsString());
    CHECK(op_types(now).count(k.onnx_op) >= 1);
    check_close(mx_out, ort, "mx vs ONNX Runtime on mx's export");
    // Import of the export gives ONNX Runtime's output.
    const mxo::ImportedModel imported = mxo::import_model(dir + "model" + suffix + ".onnx");
    check_close(mxo::testing::run_imported(imported, {{"data", input}})[0], ort,
                "imported vs ONNX Runtime");
  }
}

TEST_CASE("an LSTM exports one ONNX node per layer with ONNX's gate order and states") {
  const Checkpoint c = load_mxnet(dir_of("mxnet_lstm"));
  const NDArray input = read_pb(dir_of("mxnet_lstm") + "input_0.pb");
  const ::onnx::ModelProto m = mxo::export_model(c.symbol, c.args, c.aux, whole_input(input, 13));
  CHECK(op_types(m).count("LSTM") == 2);
  std::map<std::string, std::vector<int64_t>> dims;
  for (const auto& t : m.graph().initializer())
    dims[t.name()] = std::vector<int64_t>(t.dims().begin(), t.dims().end());
  // 2 directions, 4 gates of 6, input 4 then 12 (both directions of layer 0).
  CHECK(dims.at("rnn_l0_W") == std::vector<int64_t>{2, 24, 4});
  CHECK(dims.at("rnn_l1_W") == std::vector<int64_t>{2, 24, 12});
  CHECK(dims.at("rnn_l1_R") == std::vector<int64_t>{2, 24, 6});
  CHECK(dims.at("rnn_l1_B") == std::vector<int64_t>{2, 48});
  CHECK(dims.count("rnn_parameters") == 0);  // the flat vector is not exported
}

TEST_CASE("PyTorch's nn.LSTM and nn.GRU exported by torch.onnx import as ONNX Runtime runs them") {
  for (const std::string name : {"torch_lstm", "torch_gru"}) {
    CAPTURE(name);
    const mxo::ImportedModel m = mxo::import_model(dir_of(name) + "model.onnx");
    REQUIRE(m.inputs.size() == 1);
    check_close(mxo::testing::run_imported(
                    m, {{m.inputs[0].name, read_pb(dir_of(name) + "input_0.pb")}})[0],
                read_pb(dir_of(name) + "output_0.pb"), name);
  }
}

TEST_CASE("RNN features ONNX cannot express are refused by name") {
  Checkpoint c = load_mxnet(dir_of("mxnet_lstm"));
  const NDArray input = read_pb(dir_of("mxnet_lstm") + "input_0.pb");
  auto with = [&](const std::map<std::string, std::string>& extra) {
    op::AttrMap attrs{
        {"mode", "lstm"}, {"state_size", "6"}, {"num_layers", "2"}, {"bidirectional", "True"}};
    for (const auto& [k, v] : extra) attrs[k] = v;
    graph::Symbol data = graph::Symbol::variable("data");
    graph::Symbol h = graph::Symbol::create("_zeros", "h", {{"shape", "(4, 2, 6)"}}, {});
    graph::Symbol cell = graph::Symbol::create("_zeros", "c", {{"shape", "(4, 2, 6)"}}, {});
    graph::Symbol rnn = graph::Symbol::create(
        "RNN", "rnn", attrs, {data, graph::Symbol::variable("rnn_parameters"), h, cell});
    return test::error_text<InputError>(
        [&] { mxo::export_model(rnn, c.args, c.aux, whole_input(input, 13)); });
  };
  const std::string clip = with({{"lstm_state_clip_min", "-1"}, {"lstm_state_clip_max", "1"}});
  CAPTURE(clip);
  CHECK(clip.find("RNN with lstm_state_clip_min/max") != std::string::npos);
  // The parameters must be stored arrays.
  c.args.erase("rnn_parameters");
  const std::string computed = with({});
  CAPTURE(computed);
  CHECK(computed.find("input 'rnn_parameters' needs a shape") != std::string::npos);
}

namespace {

// mx's outputs of `net` on `values` against those of its ONNX export at
// `opset` imported back (all outputs); the export passes onnx::checker.
void check_exported(const graph::Symbol& net, const std::map<std::string, NDArray>& args,
                    const std::map<std::string, NDArray>& values, int opset) {
  CAPTURE(opset);
  mxo::ExportOptions o;
  o.opset = opset;
  o.dynamic_batch = false;
  for (const auto& [name, v] : values) o.input_shapes[name] = v.shape();
  const ::onnx::ModelProto m = mxo::export_model(net, args, {}, o);
  const mxo::ImportedModel back =
      mxo::import_model(mxo::parse_model(m.SerializeAsString(), "seq.onnx"), "seq.onnx");
  mxo::ImportedModel direct;
  direct.symbol = net;
  direct.args = args;
  const auto want = mxo::testing::run_imported(direct, values);
  const auto got = mxo::testing::run_imported(back, values);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) check_close(got[k], want[k], str("output ", k));
}

NDArray wave(const Shape& s, float f) {
  std::vector<float> v(static_cast<size_t>(s.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(f * static_cast<float>(i + 1));
  return NDArray::from_vector(s, v);
}

}  // namespace

TEST_CASE("exports of LayerNorm on an inner axis, div_sqrt_dim and a 2-layer LSTM's states") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data");
  // LayerNorm over axis 1 of (2, 3, 4): gamma and beta reshaped to (3, 1).
  const Symbol norm = Symbol::create("LayerNorm", "norm", {{"axis", "1"}, {"eps", "1e-5"}},
                                     {x, Symbol::variable("g"), Symbol::variable("b")});
  const std::map<std::string, NDArray> norm_args = {{"g", wave(Shape{3}, 0.7f)},
                                                    {"b", wave(Shape{3}, 1.9f)}};
  for (int opset : {13, 17})
    check_exported(norm, norm_args, {{"data", wave(Shape{2, 3, 4}, 0.3f)}}, opset);

  const Symbol scaled = Symbol::create("_contrib_div_sqrt_dim", "scaled", {}, {x});
  check_exported(scaled, {}, {{"data", wave(Shape{2, 3, 16}, 0.5f)}}, 13);

  // Both final states of a 2-layer bidirectional LSTM: the layers' states
  // concatenated (Concat along axis 0).
  const Checkpoint c = load_mxnet(dir_of("mxnet_lstm"));
  const NDArray input = read_pb(dir_of("mxnet_lstm") + "input_0.pb");
  const int64_t batch = input.shape()[1];
  const Symbol h = Symbol::create("_zeros", "h", {{"shape", str("(4, ", batch, ", 6)")}}, {});
  const Symbol cell = Symbol::create("_zeros", "c", {{"shape", str("(4, ", batch, ", 6)")}}, {});
  const Symbol rnn = Symbol::create("RNN", "rnn",
                                    {{"mode", "lstm"},
                                     {"state_size", "6"},
                                     {"num_layers", "2"},
                                     {"bidirectional", "True"},
                                     {"state_outputs", "True"}},
                                    {x, Symbol::variable("rnn_parameters"), h, cell});
  check_exported(rnn, {{"rnn_parameters", c.args.at("rnn_parameters")}}, {{"data", input}}, 13);
}
