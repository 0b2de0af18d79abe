// ONNX export and import: mx's exports of the shipped configs give what ONNX
// Runtime computed on them (scripts/fixtures/make_onnx_fixtures.py), imports
// of those files and of an SE-ResNet block give ONNX Runtime's outputs, the
// round trip mx -> ONNX -> mx keeps the outputs, and errors are exact.
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "error_text.h"
#include "executor/executor.h"
#include "ndarray/params_io.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"
#include "onnx_fixtures.h"
#include "op/nn/activation_table.h"
#include "run_model.h"
#include "temp_dir.h"
#include "test_paths.h"

namespace fs = std::filesystem;
using namespace mx;
namespace mxo = mx::onnx;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/onnx/";
// The shipped configs, with fewer channels (scripts/fixtures/make_onnx_fixtures.py).
const char* const kConfigs[] = {"lenet",     "mlp",   "resnet18", "resnet50",
                                "googlenet", "vgg16", "alexnet"};

using mxo::testing::check_close;
using mxo::testing::Checkpoint;
using mxo::testing::read_pb;

Checkpoint load_checkpoint(const std::string& dir, const std::string& epoch = "0001") {
  return mxo::testing::load_checkpoint(dir + "/model", epoch);
}

NDArray run_mx(const Checkpoint& c, const NDArray& data, bool fused = false) {
  return mxo::testing::run_checkpoint(c, data, fused);
}

mxo::ExportOptions export_options(const NDArray& input) {
  mxo::ExportOptions o;
  std::vector<int64_t> dims = input.shape().to_vector();
  dims[0] = 1;
  o.input_shapes["data"] = Shape(dims);
  o.doc = "Exported by mx-export from run/model-0001.params";
  return o;
}

// Exports `net` at each opset, checks the model with ONNX's own shape and
// type inference and that it uses exactly `onnx_ops`, imports it back and
// compares its outputs on `values` with the network's own.
void check_round_trip(const graph::Symbol& net, const std::map<std::string, NDArray>& values,
                      mxo::ExportOptions o, std::initializer_list<int> opsets,
                      const std::set<std::string>& onnx_ops) {
  mxo::ImportedModel direct;
  direct.symbol = net;
  const auto want = mxo::testing::run_imported(direct, values);
  for (int opset : opsets) {
    CAPTURE(opset);
    o.opset = opset;
    ::onnx::ModelProto m = mxo::export_model(net, {}, {}, o);
    mxo::parse_model(m.SerializeAsString(), "round-trip.onnx");  // onnx::checker
    ::onnx::shape_inference::InferShapes(m, ::onnx::OpSchemaRegistry::Instance(),
                                         ::onnx::ShapeInferenceOptions(true, 1));
    std::set<std::string> ops;
    for (const auto& n : m.graph().node()) ops.insert(n.op_type());
    CHECK(ops == onnx_ops);
    const auto got = mxo::testing::run_imported(mxo::import_model(m, "round-trip.onnx"), values);
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k)
      check_close(got[k], want[k], "output " + std::to_string(k));
  }
}

// An input "data" of `shape` with values sin(step * i), and export options
// for it with a fixed batch.
struct DataInput {
  std::map<std::string, NDArray> values;
  mxo::ExportOptions options;
};
DataInput data_input(const Shape& shape, float step) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(step * static_cast<float>(i));
  DataInput in;
  in.values = {{"data", NDArray::from_vector(shape, v)}};
  in.options.input_shapes = {{"data", shape}};
  in.options.dynamic_batch = false;
  return in;
}

}  // namespace

TEST_CASE("mx's exports of the shipped configs give ONNX Runtime's outputs") {
  for (const char* name : kConfigs) {
    CAPTURE(name);
    const std::string dir = kDir + name;
    Checkpoint c = load_checkpoint(dir);
    NDArray input = read_pb(dir + "/input_0.pb"), ort = read_pb(dir + "/output_0.pb");
    // mx on the checkpoint = ONNX Runtime on mx's export of it.
    check_close(run_mx(c, input), ort, "mx vs ONNX Runtime");
    // The exporter still writes the model ONNX Runtime ran (else: regenerate the fixtures).
    ::onnx::ModelProto now = mxo::export_model(c.symbol, c.args, c.aux, export_options(input));
    ::onnx::ModelProto committed = mxo::read_model(dir + "/model.onnx");
    CHECK(now.SerializeAsString() == committed.SerializeAsString());
    // Import of that file runs as ONNX Runtime ran it.
    mxo::ImportedModel imported = mxo::import_model(dir + "/model.onnx");
    REQUIRE(imported.inputs.size() == 1);
    CHECK(imported.inputs[0].name == "data");
    CHECK(imported.inputs[0].shape[0] == -1);  // the symbolic batch
    check_close(mxo::testing::run_imported(imported, {{"data", input}})[0], ort,
                "imported vs ONNX Runtime");
  }
}

TEST_CASE("MXNet Gluon model-zoo exports: mx, MXNet and ONNX Runtime agree") {
  for (const char* name : {"gluon_resnet_v1", "gluon_resnet_v2", "gluon_mobilenet"}) {
    CAPTURE(name);
    const std::string dir = kDir + name;
    Checkpoint c = load_checkpoint(dir, "0000");
    NDArray input = read_pb(dir + "/input_0.pb"), ort = read_pb(dir + "/output_0.pb");
    NDArray mx_out = run_mx(c, input);
    const NDArray mxnet_out = load_params(dir + "/mxnet_output.params").get("output");
    check_close(mx_out, mxnet_out, "mx vs MXNet");
    check_close(run_mx(c, input, true), mxnet_out, "mx with fused oneDNN graphs vs MXNet");
    check_close(mx_out, ort, "mx vs ONNX Runtime on mx's export");
    auto options = export_options(input);
    options.doc = "Exported by mx-export from model-0000.params";
    CHECK(mxo::export_model(c.symbol, c.args, c.aux, options).SerializeAsString() ==
          mxo::read_model(dir + "/model.onnx").SerializeAsString());
    check_close(
        mxo::testing::run_imported(mxo::import_model(dir + "/model.onnx"), {{"data", input}})[0],
        ort, "imported vs ONNX Runtime");
  }
}

TEST_CASE("an exported model carries initializers, BatchNorm statistics and a symbolic batch") {
  Checkpoint c = load_checkpoint(kDir + "resnet18");
  NDArray input = read_pb(kDir + "resnet18/input_0.pb");
  for (int opset : {11, 13, 17}) {
    CAPTURE(opset);
    auto options = export_options(input);
    options.opset = opset;
    ::onnx::ModelProto m = mxo::export_model(c.symbol, c.args, c.aux, options);
    // Serialized and parsed back through onnx::checker.
    ::onnx::ModelProto checked = mxo::parse_model(m.SerializeAsString(), "exported");
    CHECK(checked.opset_import(0).version() == opset);
    CHECK(checked.doc_string() == "Exported by mx-export from run/model-0001.params");
    std::set<std::string> inits;
    for (const auto& t : checked.graph().initializer()) inits.insert(t.name());
    CHECK(inits.count("stem_bn_moving_mean") == 1);
    CHECK(inits.count("stem_bn_moving_var") == 1);
    CHECK(inits.count("fc_weight") == 1);
    CHECK(inits.count("softmax_label") == 0);
    REQUIRE(checked.graph().input_size() == 1);
    CHECK(checked.graph().input(0).type().tensor_type().shape().dim(0).dim_param() == "N");
    CHECK(checked.graph().output(0).name() == "softmax_output");
  }
  CHECK(mx::test::error_text<Error>([&] {
          auto options = export_options(input);
          options.opset = 10;
          mxo::export_model(c.symbol, c.args, c.aux, options);
        }) == "opset 10 is not supported for export (choose 11 to 17)");
}

TEST_CASE("an ONNX network in PyTorch's export layout predicts what ONNX Runtime predicts") {
  mxo::ImportedModel m = mxo::import_model(kDir + "se_resnet/model.onnx");
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].name == "input");
  CHECK(m.inputs[0].shape == Shape{-1, 3, 16, 16});
  CHECK(m.output_names == std::vector<std::string>{"output"});
  CHECK(m.args.count("fc.weight") == 1);
  NDArray input = read_pb(kDir + "se_resnet/input_0.pb");
  check_close(mxo::testing::run_imported(m, {{"input", input}})[0],
              read_pb(kDir + "se_resnet/output_0.pb"), "se_resnet");
  // Another batch size: the batch stays symbolic.
  NDArray one = input.slice(0, 1).copy();
  NDArray want = read_pb(kDir + "se_resnet/output_0.pb").slice(0, 1).copy();
  check_close(mxo::testing::run_imported(m, {{"input", one}})[0], want, "batch of 1");
}

TEST_CASE("a ResNet-18 exported by torch.onnx.export predicts what ONNX Runtime predicts") {
  mxo::ImportedModel m = mxo::import_model(kDir + "torch_resnet18/model.onnx");
  REQUIRE(m.inputs.size() == 1);
  CHECK(m.inputs[0].shape == Shape{-1, 3, 64, 64});
  NDArray input = read_pb(kDir + "torch_resnet18/input_0.pb");
  check_close(mxo::testing::run_imported(m, {{"input", input}})[0],
              read_pb(kDir + "torch_resnet18/output_0.pb"), "torch_resnet18");
}

TEST_CASE("pooling with more padding at the end (SAME_UPPER) predicts what ONNX Runtime predicts") {
  mxo::ImportedModel m = mxo::import_model(kDir + "same_pooling/model.onnx");
  check_close(mxo::testing::run_imported(m, {{"x", read_pb(kDir + "same_pooling/input_0.pb")}})[0],
              read_pb(kDir + "same_pooling/output_0.pb"), "same_pooling");
}

TEST_CASE("mx -> ONNX -> mx gives the same outputs, through a file written atomically") {
  const mx::test::TempDir tmp("onnx");
  for (const char* name : kConfigs) {
    CAPTURE(name);
    Checkpoint c = load_checkpoint(kDir + name);
    NDArray input = read_pb(kDir + name + "/input_0.pb");
    const std::string path = tmp.file(std::string(name) + ".onnx");
    mxo::export_model_file(path, c.symbol, c.args, c.aux, export_options(input));
    mxo::ImportedModel back = mxo::import_model(path);
    CHECK(back.aux.size() == c.aux.size());
    check_close(mxo::testing::run_imported(back, {{"data", input}})[0], run_mx(c, input),
                "round trip");
    fs::remove(path);
  }
}

TEST_CASE("export errors name every node without an ONNX equivalent; files stay untouched") {
  using graph::Symbol;
  Symbol data = Symbol::variable("data");
  Symbol a = Symbol::create("ones_like", "ones", {}, {data});
  Symbol b = Symbol::create("softmax", "sm", {{"use_length", "True"}},
                            {Symbol::create("relu", "r", {}, {a}), Symbol::variable("len")});
  Symbol z = Symbol::create("zeros_like", "zeros", {}, {b});
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{1, 4}}, {"len", Shape{1}}};
  CHECK(mx::test::error_text<Error>([&] { mxo::export_model(z, {}, {}, o); }) ==
        "cannot export to ONNX: node 'ones' (ones_like): no export rule yet (ONNX's "
        "ConstantOfShape); node 'zeros' (zeros_like): no export rule yet (ONNX's ConstantOfShape)");
  Symbol only_b =
      Symbol::create("softmax", "sm", {{"use_length", "True"}}, {data, Symbol::variable("len")});
  CHECK(mx::test::error_text<Error>([&] { mxo::export_model(only_b, {}, {}, o); }) ==
        "cannot export to ONNX: node 'sm' (softmax): use_length has no ONNX equivalent");
  CHECK(mx::test::error_text<Error>([&] {
          mxo::export_model(Symbol::create("relu", "r", {}, {data}), {}, {}, {});
        }) == "input 'data' needs a shape (e.g. --data-shape C,H,W)");

  const mx::test::TempDir tmp("onnx");
  const std::string path = tmp.file("keep.onnx");
  { std::ofstream(path) << "previous"; }
  CHECK_THROWS_AS(mxo::export_model_file(path, z, {}, {}, o), InputError);
  std::ifstream in(path);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(kept == "previous");
  fs::remove(path);
}

TEST_CASE("import lists every unsupported operator with its node before building anything") {
  ::onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  auto add = [&](const std::string& op, const std::string& name, const std::string& from,
                 const std::string& to) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->add_input(from);
    n->add_output(to);
  };
  add("Relu", "relu1", "x", "a");
  add("Cos", "cos1", "a", "b");
  add("Relu", "relu2", "b", "c");
  add("Sin", "", "c", "d");
  g->add_output()->set_name("d");
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      ::onnx::TensorProto::FLOAT);
  CHECK(mx::test::error_text<Error>([&] { mxo::import_model(m, "net.onnx"); }) ==
        "net.onnx: 2 operators not supported: node 'cos1' (Cos), node '#3' (Sin)");
  try {
    mxo::import_model(m, "net.onnx");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 2);
  }
}

TEST_CASE("malformed ONNX files give one clear error with exit code 2") {
  std::ifstream in(kDir + "se_resnet/model.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const mx::test::TempDir tmp("onnx");
  const std::string path = tmp.file("truncated.onnx");
  { std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2); }
  std::string message;
  int code = 0;
  try {
    mxo::import_model(path);
  } catch (const Error& e) {
    message = e.what();
    code = e.exit_code();
  }
  CHECK(message == path + ": not an ONNX model (the protobuf does not parse; truncated?)");
  CHECK(code == 2);
  { std::ofstream(path, std::ios::binary) << ""; }
  CHECK(mx::test::error_text<Error>([&] { mxo::import_model(path); }) ==
        path + ": not an ONNX model (the protobuf does not parse; truncated?)");
  fs::remove(path);
  CHECK(mx::test::error_text<Error>([&] { mxo::import_model(path); }).find(path) !=
        std::string::npos);

  // Larger than protobuf's 2 GiB: refused by its size, before reading (a
  // sparse file: no disk used).
  const std::string huge = tmp.file("huge.onnx");
  { std::ofstream(huge, std::ios::binary) << ""; }
  fs::resize_file(huge, uint64_t{3} << 30);
  CHECK(mx::test::error_text<Error>([&] { mxo::read_model(huge); }) ==
        huge + ": larger than 2 GiB, protobuf's limit");
  fs::remove(huge);

  // A file whose reads fail: "cannot read", not an empty model.
  if (const auto unreadable = mx::test::unreadable_file()) {
    CHECK(mx::test::error_text<Error>([&] { mxo::read_model(*unreadable); }) ==
          "cannot read '" + *unreadable + "'");
  } else {
    MESSAGE("skipped: this machine has no file whose reads fail");
  }

  // A protobuf that parses but holds no graph.
  ::onnx::ModelProto no_graph;
  no_graph.set_ir_version(7);
  CHECK(mx::test::error_text<Error>([&] {
          mxo::parse_model(no_graph.SerializeAsString(), "g.onnx");
        }) == "g.onnx: not an ONNX model (no graph)");
  // One that onnx::checker refuses: its message, without the trailing newline.
  ::onnx::ModelProto unchecked = mxo::read_model(kDir + "se_resnet/model.onnx");
  unchecked.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOp");
  const std::string refusal = mx::test::error_text<Error>(
      [&] { mxo::parse_model(unchecked.SerializeAsString(), "c.onnx"); });
  CHECK(refusal.rfind("c.onnx: invalid ONNX model: ", 0) == 0);
  CHECK(refusal.size() > std::string("c.onnx: invalid ONNX model: ").size() + 10);
  CHECK(refusal.back() != '\n');
  CHECK(refusal.back() != ' ');
  // Writing a model onnx::checker refuses: an error, and no file.
  const std::string written = tmp.file("unchecked.onnx");
  const std::string write_error =
      mx::test::error_text<Error>([&] { mxo::write_model(written, unchecked); });
  CHECK(write_error.rfind(written + ": the exported model fails onnx::checker: ", 0) == 0);
  CHECK(!fs::exists(written));

  // A tensor whose declared size and data disagree.
  ::onnx::ModelProto m = mxo::read_model(kDir + "se_resnet/model.onnx");
  m.mutable_graph()->mutable_initializer(0)->set_dims(0, 9);
  CHECK(mx::test::error_text<Error>([&] { mxo::import_model(m, "bad.onnx"); }) ==
        "bad.onnx: initializer 'onnx::Conv_41': raw data has 864 bytes but 243 elements of 4 "
        "bytes were declared");
}

TEST_CASE("Softmax before opset 13 normalizes over the input flattened after its axis") {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    CAPTURE(op);
    ::onnx::ModelProto m;
    m.set_ir_version(6);
    m.add_opset_import()->set_version(11);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto describe = [](::onnx::ValueInfoProto* info, const char* name) {
      info->set_name(name);
      auto* t = info->mutable_type()->mutable_tensor_type();
      t->set_elem_type(::onnx::TensorProto::FLOAT);
      for (int d : {2, 3, 4}) t->mutable_shape()->add_dim()->set_dim_value(d);
    };
    describe(g->add_input(), "x");
    describe(g->add_output(), "y");
    auto* n = g->add_node();
    n->set_op_type(op);
    n->add_input("x");
    n->add_output("y");
    auto* axis = n->add_attribute();
    axis->set_name("axis");
    axis->set_type(::onnx::AttributeProto::INT);
    axis->set_i(1);
    std::vector<float> x(24);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i));
    auto y = mxo::testing::run_imported(mxo::import_model(m, "softmax.onnx"),
                                        {{"x", NDArray::from_vector(Shape{2, 3, 4}, x)}})[0]
                 .to_vector<float>();
    for (int b = 0; b < 2; ++b) {
      double sum = 0;
      for (int i = 0; i < 12; ++i) sum += std::exp(x[static_cast<size_t>(b * 12 + i)]);
      for (int i = 0; i < 12; ++i) {
        const size_t k = static_cast<size_t>(b * 12 + i);
        const double p = std::exp(x[k]) / sum;
        CHECK(y[k] ==
              doctest::Approx(std::string(op) == "Softmax" ? p : std::log(p)).epsilon(1e-5));
      }
    }
  }
}

TEST_CASE("comparisons and logical operators export with BOOL inside and import back") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data"), y = Symbol::variable("other"),
               row = Symbol::variable("row");
  auto node = [](const char* op, std::vector<Symbol> in,
                 std::map<std::string, std::string> a = {}) {
    return Symbol::create(op, std::string(op) + "0", a, in);
  };
  const Symbol net = Symbol::group({
      node("_equal", {x, y}),
      node("broadcast_not_equal", {x, row}),
      node("_greater_scalar", {x}, {{"scalar", "0.5"}}),
      node("broadcast_greater_equal", {x, row}),
      node("_lesser", {x, y}),
      node("_lesser_equal_scalar", {x}, {{"scalar", "0"}}),
      node("broadcast_logical_and", {x, row}),
      node("_logical_or", {x, y}),
      node("_logical_xor_scalar", {x}, {{"scalar", "1"}}),
      node("logical_not", {x}),
  });
  // Small integers: ties and zeros.
  std::map<std::string, NDArray> values = {
      {"data", NDArray::from_vector(Shape{2, 3}, std::vector<float>{0, 1, -1, 1, 0, 2})},
      {"other", NDArray::from_vector(Shape{2, 3}, std::vector<float>{0, 2, -1, 0, 0, 1})},
      {"row", NDArray::from_vector(Shape{1, 3}, std::vector<float>{1, 0, -1})}};
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{2, 3}}, {"other", Shape{2, 3}}, {"row", Shape{1, 3}}};
  o.dynamic_batch = false;
  // ONNX's own type check: BOOL operands for And/Or/Xor/Not, FLOAT outputs.
  check_round_trip(net, values, o, {12, 13, 17},
                   {"Equal", "Not", "Greater", "GreaterOrEqual", "Less", "LessOrEqual", "And", "Or",
                    "Xor", "Cast"});
  o.opset = 11;
  CHECK(mx::test::error_text<Error>([&] { mxo::export_model(net, {}, {}, o); }) ==
        "cannot export to ONNX: node 'broadcast_greater_equal0' (broadcast_greater_equal): "
        "GreaterOrEqual needs opset 12 or later; node '_lesser_equal_scalar0' "
        "(_lesser_equal_scalar): LessOrEqual needs opset 12 or later");

  // A BOOL tensor stays inside the graph: as an output it is declined.
  ::onnx::ModelProto bare = mxo::export_model(node("_lesser", {x, y}), {}, {}, o);
  auto* g = bare.mutable_graph();
  REQUIRE(g->node_size() == 2);
  const std::string result = g->node(0).output(0);
  g->mutable_output(0)->set_name(result);
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      ::onnx::TensorProto::BOOL);
  g->mutable_node()->RemoveLast();
  CHECK(mx::test::error_text<Error>([&] { mxo::import_model(bare, "bool.onnx"); }) ==
        "bool.onnx: graph output '" + result + "' is a BOOL tensor (mx's outputs are float32)");
}

TEST_CASE("SwapAxis, squeeze and erf export as Transpose, Squeeze and Erf and import back") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data");
  const Symbol swapped = Symbol::create("SwapAxis", "swap", {{"dim1", "0"}, {"dim2", "-1"}}, {x});
  const Symbol squeezed = Symbol::create("squeeze", "sq", {{"axis", "(1,)"}}, {x});
  const Symbol net = Symbol::group({swapped, Symbol::create("erf", "e", {}, {squeezed})});
  std::vector<float> v(2 * 1 * 3);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -1.5f + 0.6f * static_cast<float>(i);
  const std::map<std::string, NDArray> values = {{"data", NDArray::from_vector(Shape{2, 1, 3}, v)}};
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{2, 1, 3}}};
  check_round_trip(net, values, o, {11, 13}, {"Transpose", "Squeeze", "Erf"});
  o.opset = 13;
  CHECK(mx::test::error_text<Error>(
            [&] { mxo::export_model(Symbol::create("squeeze", "all", {}, {x}), {}, {}, o); }) ==
        "cannot export to ONNX: node 'all' (squeeze): squeeze without an axis depends on "
        "the batch size");
}

TEST_CASE("every activation kind exports as its ONNX operator and imports back as itself") {
  using graph::Symbol;
  std::vector<float> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -3.0f + 0.5f * static_cast<float>(i);
  const std::map<std::string, NDArray> values = {{"data", NDArray::from_vector(Shape{3, 4}, v)}};
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{3, 4}}};
  for (const op::ActivationKind& kind : op::kActivationKinds) {
    CAPTURE(kind.name);
    const Symbol net =
        Symbol::create("Activation", "a", {{"act_type", kind.name}}, {Symbol::variable("data")});
    ::onnx::ModelProto m = mxo::export_model(net, {}, {}, o);
    REQUIRE(m.graph().node_size() == 1);
    CHECK(m.graph().node(0).op_type() == kind.onnx_op);
    const mxo::ImportedModel back = mxo::import_model(m, "act.onnx");
    const auto& node = *back.symbol.outputs()[0].node;
    REQUIRE(!node.is_variable());
    CHECK(node.op->def().name == "Activation");
    CHECK(node.attrs.at("act_type") == kind.name);
    mxo::ImportedModel direct;
    direct.symbol = net;
    check_close(mxo::testing::run_imported(back, values)[0],
                mxo::testing::run_imported(direct, values)[0], kind.name);
  }
}

TEST_CASE("LeakyReLU's kinds export as their ONNX operators and import back; GELU is refused") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data"), gamma = Symbol::variable("gamma");
  std::vector<float> v(2 * 3 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = -2.5f + 0.45f * static_cast<float>(i);
  const std::map<std::string, NDArray> values = {
      {"data", NDArray::from_vector(Shape{2, 3, 2}, v)},
      {"gamma", NDArray::from_vector(Shape{3}, std::vector<float>{0.1f, 0.5f, 2.0f})}};
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{2, 3, 2}}, {"gamma", Shape{3}}};
  o.dynamic_batch = false;
  auto leaky = [&](const char* kind, std::vector<Symbol> in) {
    return Symbol::create("LeakyReLU", kind, {{"act_type", kind}, {"slope", "0.3"}}, in);
  };
  // A slope other than ONNX's defaults (0.01 for LeakyRelu, 1 for Elu).
  check_round_trip(leaky("leaky", {x}), values, o, {11, 13}, {"LeakyRelu"});
  check_round_trip(leaky("elu", {x}), values, o, {11, 13}, {"Elu"});
  check_round_trip(leaky("selu", {x}), values, o, {11, 13}, {"Selu"});
  // One slope per channel (axis 1), reshaped to broadcast from the right.
  check_round_trip(leaky("prelu", {x, gamma}), values, o, {11, 13}, {"Reshape", "PRelu"});
  CHECK(mx::test::error_text<Error>([&] { mxo::export_model(leaky("gelu", {x}), {}, {}, o); }) ==
        "cannot export to ONNX: node 'gelu' (LeakyReLU): act_type 'gelu' has no ONNX "
        "equivalent at opsets 11-17");
}

TEST_CASE("softmax's temperature and axis export; a middle axis needs opset 13") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data");
  DataInput in = data_input(Shape{2, 3, 4}, 0.7f);
  const auto& values = in.values;
  mxo::ExportOptions& o = in.options;
  for (const char* op : {"softmax", "log_softmax"}) {
    CAPTURE(op);
    const std::string onnx_op = std::string(op) == "softmax" ? "Softmax" : "LogSoftmax";
    auto net = [&](const char* axis, const char* temperature) {
      return Symbol::create(op, "s", {{"axis", axis}, {"temperature", temperature}}, {x});
    };
    // Temperatures below and above 1 divide the input first; 1 adds nothing.
    check_round_trip(net("-1", "0.5"), values, o, {11, 13}, {"Div", onnx_op});
    check_round_trip(net("2", "3"), values, o, {11, 13}, {"Div", onnx_op});
    check_round_trip(net("-1", "1"), values, o, {11, 13}, {onnx_op});
    check_round_trip(net("1", "0.5"), values, o, {13}, {"Div", onnx_op});
    o.opset = 11;
    CHECK(mx::test::error_text<Error>([&] { mxo::export_model(net("1", "1"), {}, {}, o); }) ==
          "cannot export to ONNX: node 's' (" + std::string(op) +
              "): axis 1 of a 3-D input needs opset 13 or later");
  }
}

TEST_CASE("Deconvolution exports as ConvTranspose with its padding and imports back") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data"), w = Symbol::variable("w"), b = Symbol::variable("b");
  std::vector<float> xv(1 * 2 * 3 * 3), wv(2 * 3 * 3 * 3);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::cos(0.9f * static_cast<float>(i));
  for (size_t i = 0; i < wv.size(); ++i) wv[i] = 0.2f * std::sin(1.3f * static_cast<float>(i));
  const std::map<std::string, NDArray> values = {
      {"data", NDArray::from_vector(Shape{1, 2, 3, 3}, xv)},
      {"w", NDArray::from_vector(Shape{2, 3, 3, 3}, wv)},
      {"b", NDArray::from_vector(Shape{3}, std::vector<float>{0.5f, -1, 0.25f})}};
  mxo::ExportOptions o;
  o.input_shapes = {{"data", Shape{1, 2, 3, 3}}, {"w", Shape{2, 3, 3, 3}}, {"b", Shape{3}}};
  o.dynamic_batch = false;
  // Output 6x6 only with pad 1 and adj 1 both exported: (3-1)*2 - 2 + 3 + 1.
  const Symbol up = Symbol::create("Deconvolution", "up",
                                   {{"kernel", "(3,3)"},
                                    {"stride", "(2,2)"},
                                    {"pad", "(1,1)"},
                                    {"adj", "(1,1)"},
                                    {"num_filter", "3"},
                                    {"no_bias", "False"}},
                                   {x, w, b});
  check_round_trip(up, values, o, {11, 13}, {"ConvTranspose"});
  const Symbol sized = Symbol::create("Deconvolution", "sized",
                                      {{"kernel", "(3,3)"},
                                       {"stride", "(2,2)"},
                                       {"target_shape", "(6,6)"},
                                       {"num_filter", "3"},
                                       {"no_bias", "False"}},
                                      {x, w, b});
  CHECK(mx::test::error_text<Error>([&] { mxo::export_model(sized, {}, {}, o); }) ==
        "cannot export to ONNX: node 'sized' (Deconvolution): target_shape is not exported "
        "(give pad and adj instead)");
}

TEST_CASE("Reshape's special codes, expand_dims' negative axis and average pooling export") {
  using graph::Symbol;
  const Symbol x = Symbol::variable("data");
  DataInput in = data_input(Shape{2, 3, 4}, 0.3f);
  const auto& values = in.values;
  mxo::ExportOptions& o = in.options;
  // -3 merges the batch with the next axis: the target's first dimension
  // (6) is not the batch (2), so it is written as it is, not as 0.
  check_round_trip(Symbol::create("Reshape", "merged", {{"shape", "(-3, -2)"}}, {x}), values, o,
                   {11, 13}, {"Reshape"});
  // -2 keeps the batch: written as 0, ONNX's "copy this dimension".
  ::onnx::ModelProto kept =
      mxo::export_model(Symbol::create("Reshape", "kept", {{"shape", "(-2,)"}}, {x}), {}, {}, o);
  bool found = false;
  for (const auto& t : kept.graph().initializer())
    if (t.name() == "kept_shape") {
      found = true;
      CHECK(std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end()) ==
            std::vector<int64_t>{0, 3, 4});
    }
  CHECK(found);
  check_round_trip(Symbol::create("expand_dims", "last", {{"axis", "-1"}}, {x}), values, o,
                   {11, 13}, {"Unsqueeze"});
  check_round_trip(Symbol::create("expand_dims", "first", {{"axis", "-4"}}, {x}), values, o,
                   {11, 13}, {"Unsqueeze"});
  // SliceChannel squeezing its (negative) axis: Split, then Squeeze per part.
  for (const char* axis : {"1", "-2"})
    check_round_trip(
        Symbol::create("SliceChannel", "parts",
                       {{"num_outputs", "3"}, {"axis", axis}, {"squeeze_axis", "True"}}, {x}),
        values, o, {11, 13}, {"Split", "Squeeze"});
  // argmax: ONNX's keepdims defaults to 1, mx's to false; written either way.
  // (mx does not import ArgMax: its int64 output has no float32 home yet.)
  for (const char* keep : {"False", "True"}) {
    o.opset = 13;
    const ::onnx::ModelProto m = mxo::export_model(
        Symbol::create("argmax", "top", {{"axis", "1"}, {"keepdims", keep}}, {x}), {}, {}, o);
    mxo::parse_model(m.SerializeAsString(), "argmax.onnx");  // onnx::checker
    REQUIRE(m.graph().node_size() == 2);
    CHECK(m.graph().node(0).op_type() == "ArgMax");
    int64_t written = -1;
    for (const auto& a : m.graph().node(0).attribute())
      if (a.name() == "keepdims") written = a.i();
    CHECK(written == (std::string(keep) == "True" ? 1 : 0));
  }

  // Average pooling writes count_include_pad as ONNX's 0 or 1.
  std::vector<float> image(1 * 1 * 4 * 4);
  for (size_t i = 0; i < image.size(); ++i) image[i] = static_cast<float>(i);
  const std::map<std::string, NDArray> pixels = {
      {"data", NDArray::from_vector(Shape{1, 1, 4, 4}, image)}};
  o.input_shapes = {{"data", Shape{1, 1, 4, 4}}};
  for (const char* include : {"True", "False"}) {
    CAPTURE(include);
    const Symbol avg = Symbol::create("Pooling", "avg",
                                      {{"kernel", "(3, 3)"},
                                       {"pad", "(1, 1)"},
                                       {"pool_type", "avg"},
                                       {"count_include_pad", include}},
                                      {x});
    check_round_trip(avg, pixels, o, {11, 13}, {"AveragePool"});
    o.opset = 13;
    const ::onnx::ModelProto m = mxo::export_model(avg, {}, {}, o);
    int64_t written = -1;
    for (const auto& a : m.graph().node(0).attribute())
      if (a.name() == "count_include_pad") written = a.i();
    CHECK(written == (std::string(include) == "True" ? 1 : 0));
  }
}

namespace {

// A model of one node reading float inputs of the given shapes and int64
// initializers, writing "y": the importer's refusals and corner cases.
struct OneNode {
  ::onnx::ModelProto m;
  ::onnx::NodeProto* node = nullptr;

  OneNode(const std::string& op, const std::vector<std::pair<std::string, Shape>>& inputs,
          int opset = 13) {
    m.set_ir_version(7);
    m.add_opset_import()->set_version(opset);
    auto* g = m.mutable_graph();
    g->set_name("g");
    node = g->add_node();
    node->set_op_type(op);
    node->set_name("n1");
    for (const auto& [name, shape] : inputs) {
      float_input(name, shape.to_vector());
      node->add_input(name);
    }
    node->add_output("y");
    g->add_output()->set_name("y");
  }
  void ints(const std::string& name, const std::vector<int64_t>& values) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  void text(const std::string& name, const std::string& value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::STRING);
    a->set_s(value);
  }
  void integer(const std::string& name, int64_t value) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(value);
  }
  // An int64 initializer as the node's next input.
  void constant_input(const std::string& name, const std::vector<int64_t>& values) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    node->add_input(name);
  }
  // A float32 initializer as the node's next input (1-D unless `dims`).
  void float_constant_input(const std::string& name, const std::vector<float>& values,
                            std::vector<int64_t> dims = {}) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
    for (int64_t d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    node->add_input(name);
  }
  // A float input of the graph (not read by the node).
  void float_input(const std::string& name, const std::vector<int64_t>& dims) {
    auto* in = m.mutable_graph()->add_input();
    in->set_name(name);
    auto* t = in->mutable_type()->mutable_tensor_type();
    t->set_elem_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // A node after this one; its output becomes the graph's output.
  ::onnx::NodeProto* then(const std::string& op, const std::string& name,
                          const std::vector<std::string>& inputs, const std::string& output) {
    auto* p = m.mutable_graph()->add_node();
    p->set_op_type(op);
    p->set_name(name);
    for (const auto& i : inputs) p->add_input(i);
    p->add_output(output);
    m.mutable_graph()->mutable_output(0)->set_name(output);
    return p;
  }
  // A second output of the node, also a graph output.
  void extra_output(const std::string& name) {
    node->add_output(name);
    m.mutable_graph()->add_output()->set_name(name);
  }
  std::string import_error() {
    return mx::test::error_text<Error>([&] { mxo::import_model(m, "t.onnx"); });
  }
};

}  // namespace

TEST_CASE("the importer refuses what mx cannot compute, naming it") {
  OneNode conv("Conv", {{"x", Shape{1, 3, 8, 8}}, {"w", Shape{4, 3, 3, 3}}});
  conv.ints("pads", {0, 0, 1, 1});
  CHECK(conv.import_error().find("asymmetric padding (0, 0, 1, 1)") != std::string::npos);

  OneNode pool5("GlobalAveragePool", {{"x", Shape{1, 2, 3, 4, 5}}});
  CHECK(pool5.import_error().find("global pooling of rank 5") != std::string::npos);

  // Batch axes that differ (1 against 2) would broadcast: refused.
  OneNode matmul("MatMul", {{"a", Shape{1, 2, 3, 4}}, {"b", Shape{2, 2, 4, 5}}});
  CHECK(matmul.import_error().find("MatMul with broadcast or unknown batch axes") !=
        std::string::npos);

  OneNode slice("Slice", {{"x", Shape{4, 6}}});
  slice.constant_input("starts", {0});
  slice.constant_input("ends", {4});
  slice.constant_input("axes", {1});
  slice.constant_input("steps", {2});
  CHECK(slice.import_error().find("Slice with step 2") != std::string::npos);

  OneNode conv3d("Conv", {{"x", Shape{1, 1, 3, 3, 3}}, {"w", Shape{1, 1, 1, 1, 1}}});
  CHECK(conv3d.import_error() == "t.onnx: node 'n1' (Conv): 3-D convolution (mx has 1-D and 2-D)");

  // ONNX's Reshape codes are 0 and one -1; mx's own (-2, -3, -4) are not ONNX.
  for (const auto& [shape, why] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{-2, 1}, "the shape (-2, 1) holds -2 (ONNX allows -1 and 0 as codes)"},
           {{-1, -1}, "the shape (-1, -1) has more than one -1"}}) {
    OneNode reshape("Reshape", {{"x", Shape{3, 4}}});
    reshape.constant_input("shape", shape);
    CHECK(reshape.import_error() == "t.onnx: node 'n1' (Reshape): " + why);
  }

  // mx's Reshape has no scalar target (its empty shape means "not given").
  OneNode scalar("Reshape", {{"x", Shape{1}}});
  scalar.constant_input("shape", {});
  CHECK(scalar.import_error() ==
        "t.onnx: node 'n1' (Reshape): Reshape to a scalar (an empty shape)");

  // A shape computed in the graph, and an axis past the rank.
  OneNode computed("Reshape", {{"x", Shape{2, 3}}, {"s", Shape{2}}});
  CHECK(computed.import_error() ==
        "t.onnx: node 'n1' (Reshape): shape (input 1 's') must be a constant");
  OneNode first_axis("Softmax", {{"x", Shape{2, 3}}});
  first_axis.integer("axis", -2);  // -rank: the first axis, in range
  CHECK(first_axis.import_error() == "(no error)");
  OneNode past("Softmax", {{"x", Shape{2, 3}}});
  past.integer("axis", 2);
  CHECK(past.import_error() == "t.onnx: node 'n1' (Softmax): axis 2 is out of range for rank 2");

  // One unsupported operator: the count in the singular.
  OneNode cosine("Cos", {{"x", Shape{2}}});
  CHECK(cosine.import_error() == "t.onnx: 1 operator not supported: node 'n1' (Cos)");

  // Outputs mx does not compute, asked for by name.
  OneNode dropout("Dropout", {{"x", Shape{2, 3}}});
  dropout.extra_output("mask");
  CHECK(dropout.import_error() == "t.onnx: node 'n1' (Dropout): the mask output");
  OneNode argmax("MaxPool", {{"x", Shape{1, 1, 4, 4}}});
  argmax.ints("kernel_shape", {2, 2});
  argmax.extra_output("indices");
  CHECK(argmax.import_error() == "t.onnx: node 'n1' (MaxPool): the Indices output");
  // An output left unnamed is not asked for.
  OneNode unnamed("Dropout", {{"x", Shape{2, 3}}});
  unnamed.node->add_output("");
  CHECK_NOTHROW(mxo::import_model(unnamed.m, "t.onnx"));
}

TEST_CASE("auto_pad SAME, Slice from the end and opset-6 arithmetic import as ONNX defines them") {
  std::vector<float> v(1 * 1 * 6 * 6);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * static_cast<float>(i));
  const NDArray image = NDArray::from_vector(Shape{1, 1, 6, 6}, v);
  std::vector<float> w(25);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * std::cos(static_cast<float>(i));
  auto conv = [&](const char* autopad, const std::vector<int64_t>& pads) {
    OneNode n("Conv", {{"x", Shape{1, 1, 6, 6}}});
    auto* t = n.m.mutable_graph()->add_initializer();
    t->set_name("w");
    t->set_data_type(::onnx::TensorProto::FLOAT);
    for (int64_t d : {1, 1, 5, 5}) t->add_dims(d);
    for (float x : w) t->add_float_data(x);
    n.node->add_input("w");
    n.ints("kernel_shape", {5, 5});
    if (autopad[0] != '\0') n.text("auto_pad", autopad);
    if (!pads.empty()) n.ints("pads", pads);
    return mxo::testing::run_imported(mxo::import_model(n.m, "t.onnx"), {{"x", image}})[0];
  };
  // A 5x5 kernel, stride 1: 4 rows and columns of padding, 2 on each side.
  const NDArray explicit_pads = conv("", {2, 2, 2, 2});
  check_close(conv("SAME_UPPER", {}), explicit_pads, "SAME_UPPER");
  check_close(conv("SAME_LOWER", {}), explicit_pads, "SAME_LOWER");

  // Negative starts and ends count from the end of the axis.
  std::vector<float> rows(12);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
  auto slice = [&](int64_t start, int64_t end) {
    OneNode n("Slice", {{"x", Shape{2, 6}}});
    n.constant_input("starts", {start});
    n.constant_input("ends", {end});
    n.constant_input("axes", {1});
    return mxo::testing::run_imported(mxo::import_model(n.m, "t.onnx"),
                                      {{"x", NDArray::from_vector(Shape{2, 6}, rows)}})[0]
        .to_vector<float>();
  };
  CHECK(slice(-1, 6) == std::vector<float>{5, 11});
  CHECK(slice(-2, -1) == std::vector<float>{4, 10});

  // Opset 6: `axis` counts only with broadcast=1; alone it is ignored.
  OneNode add("Add", {{"a", Shape{2, 3}}, {"b", Shape{2, 3}}}, 6);
  add.integer("axis", 1);
  const auto sum = mxo::testing::run_imported(
      mxo::import_model(add.m, "t.onnx"),
      {{"a", NDArray::from_vector(Shape{2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6})},
       {"b", NDArray::full(Shape{2, 3}, 10)}})[0];
  CHECK(sum.to_vector<float>() == std::vector<float>{11, 12, 13, 14, 15, 16});
  add.integer("broadcast", 1);
  CHECK(add.import_error() ==
        "t.onnx: node 'n1' (Add): broadcasting along a given axis (opsets before 7)");
}

TEST_CASE("constant folding: Expand broadcasts values, Cast chains fold and truncate") {
  auto cast_to = [](::onnx::NodeProto* p, int64_t to) {
    auto* a = p->add_attribute();
    a->set_name("to");
    a->set_type(::onnx::AttributeProto::INT);
    a->set_i(to);
  };
  // Expand of (3, 1) to (2, 3, 4): each row's value along the new axes.
  OneNode expand("Expand", {});
  expand.float_constant_input("v", {1, 2, 3}, {3, 1});
  expand.constant_input("shape", {2, 3, 4});
  expand.float_input("x", {2, 3, 4});
  expand.then("Add", "plus", {"x", "y"}, "z");
  const mxo::ImportedModel expanded = mxo::import_model(expand.m, "t.onnx");
  const auto e = mxo::testing::run_imported(expanded, {{"x", NDArray::zeros(Shape{2, 3, 4})}})[0];
  REQUIRE(e.shape() == Shape{2, 3, 4});
  std::vector<float> want;
  for (int b = 0; b < 2; ++b)
    for (float row : {1.0f, 2.0f, 3.0f})
      for (int k = 0; k < 4; ++k) want.push_back(row);
  CHECK(e.to_vector<float>() == want);

  // float -> INT32 -> INT64 -> FLOAT: folded at each step (no Cast node
  // is left), INT32 truncating toward zero.
  OneNode cast("Cast", {});
  cast.float_constant_input("f", {2.7f, -1.5f, 0.2f, 7});
  cast.integer("to", ::onnx::TensorProto::INT32);
  cast_to(cast.then("Cast", "j", {"y"}, "j"), ::onnx::TensorProto::INT64);
  cast_to(cast.then("Cast", "g", {"j"}, "g"), ::onnx::TensorProto::FLOAT);
  cast.float_input("x", {4});
  cast.then("Add", "plus", {"x", "g"}, "z");
  const mxo::ImportedModel cast_back = mxo::import_model(cast.m, "t.onnx");
  for (const auto& n : graph::topo_order(cast_back.symbol.outputs()))
    CHECK((n->is_variable() || n->op->def().name != "Cast"));
  const auto c = mxo::testing::run_imported(cast_back, {{"x", NDArray::zeros(Shape{4})}})[0];
  CHECK(c.to_vector<float>() == std::vector<float>{2, -1, 0, 7});

  // Expand of an int64 shape value: folded (the graph takes no int64 tensor).
  OneNode side("Expand", {});
  side.constant_input("three", {3});
  side.constant_input("twice", {2});
  side.float_input("x", {9});
  side.then("Reshape", "r", {"x", "y"}, "z");
  CHECK(mxo::testing::run_imported(mxo::import_model(side.m, "t.onnx"),
                                   {{"x", NDArray::zeros(Shape{9})}})[0]
            .shape() == Shape{3, 3});

  // Gather from a 1-D shape, axis 0 or -1 (the same axis), into Reshape.
  for (int64_t axis : {0, -1}) {
    CAPTURE(axis);
    OneNode gather("Gather", {});
    gather.constant_input("dims", {6, 2, 5});
    gather.constant_input("which", {1, 0});
    gather.integer("axis", axis);
    gather.float_input("x", {12});
    gather.then("Reshape", "r", {"x", "y"}, "z");
    const auto r = mxo::testing::run_imported(mxo::import_model(gather.m, "t.onnx"),
                                              {{"x", NDArray::zeros(Shape{12})}})[0];
    CHECK(r.shape() == Shape{2, 6});
  }
}

TEST_CASE("recurrent layers and LayerNormalization: sequence lengths, shapes that do not fit") {
  // A GRU with sequence_lens (int32): 3 steps, batch 2, input 2, hidden 2.
  const int64_t h = 2;
  OneNode gru("GRU", {{"x", Shape{3, 2, 2}}});
  gru.integer("hidden_size", h);
  gru.integer("linear_before_reset", 1);
  std::vector<float> w(3 * h * 2), r(3 * h * h);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.3f * std::sin(static_cast<float>(i));
  for (size_t i = 0; i < r.size(); ++i) r[i] = 0.2f * std::cos(static_cast<float>(i));
  gru.float_constant_input("W", w, {1, 3 * h, 2});
  gru.float_constant_input("R", r, {1, 3 * h, h});
  gru.float_constant_input("B", std::vector<float>(6 * h, 0.1f), {1, 6 * h});
  auto* lens = gru.m.mutable_graph()->add_initializer();
  lens->set_name("lens");
  lens->set_data_type(::onnx::TensorProto::INT32);
  lens->add_dims(2);
  lens->add_int32_data(3);
  lens->add_int32_data(1);
  gru.node->add_input("lens");
  std::vector<float> xv(3 * 2 * 2);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::cos(0.5f * static_cast<float>(i));
  const auto y = mxo::testing::run_imported(mxo::import_model(gru.m, "t.onnx"),
                                            {{"x", NDArray::from_vector(Shape{3, 2, 2}, xv)}})[0];
  REQUIRE(y.shape() == Shape{3, 1, 2, 2});
  // The second sequence ends after one step: its later outputs are zero.
  const auto yv = y.to_vector<float>();
  for (int t = 1; t < 3; ++t)
    for (int k = 0; k < 2; ++k) CHECK(yv[static_cast<size_t>((t * 2 + 1) * 2 + k)] == 0.0f);
  CHECK(yv[2] != 0.0f);

  // Weights of another hidden size: named with both shapes.
  OneNode lstm("LSTM", {{"x", Shape{3, 2, 2}}});
  lstm.integer("hidden_size", 2);
  lstm.float_constant_input("W", std::vector<float>(6 * 2), {1, 6, 2});
  lstm.float_constant_input("R", std::vector<float>(8 * 2), {1, 8, 2});
  CHECK(
      lstm.import_error() ==
      "t.onnx: node 'n1' (LSTM): LSTM: W (1, 6, 2) and R (1, 8, 2) do not fit hidden_size 2 and 1 "
      "direction(s)");

  // LayerNormalization from axis 1 over a symbolic axis: refused.
  OneNode norm("LayerNormalization", {{"x", Shape{2, 3, 4}}, {"scale", Shape{3, 4}}});
  norm.integer("axis", 1);
  auto* dim = norm.m.mutable_graph()
                  ->mutable_input(0)
                  ->mutable_type()
                  ->mutable_tensor_type()
                  ->mutable_shape()
                  ->mutable_dim(1);
  dim->clear_dim_value();
  dim->set_dim_param("T");
  CHECK(norm.import_error() ==
        "t.onnx: node 'n1' (LayerNormalization): LayerNormalization over "
        "axes of unknown size");
}

TEST_CASE("an initializer read twice is one argument; read as a weight and a statistic, refused") {
  OneNode twice("Add", {{"x", Shape{3}}});
  twice.float_constant_input("c", {1, 2, 3});
  twice.then("Mul", "n2", {"y", "c"}, "z");
  const mxo::ImportedModel model = mxo::import_model(twice.m, "t.onnx");
  CHECK(model.symbol.list_arguments() == std::vector<std::string>{"x", "c"});
  CHECK(model.args.size() == 1);
  const auto out = mxo::testing::run_imported(
      model, {{"x", NDArray::from_vector(Shape{3}, std::vector<float>{1, -1, 0.5f})}});
  CHECK(out[0].to_vector<float>() == std::vector<float>{2, 2, 10.5f});

  // BatchNorm's bias and running mean one initializer: an argument and an
  // auxiliary state at once, which mx's graphs cannot hold.
  OneNode bn("BatchNormalization", {{"x", Shape{1, 2, 2, 2}}});
  bn.float_constant_input("scale", {1, 1});
  bn.float_constant_input("shared", {0.5f, -0.5f});
  bn.node->add_input("shared");
  bn.float_constant_input("var", {1, 4});
  CHECK(bn.import_error() ==
        "t.onnx: node 'n1' (BatchNormalization): 'shared' is used as a weight and a statistic");
  // A running variance read again as an operand: the same, in the other order.
  OneNode stat("BatchNormalization", {{"x", Shape{1, 2, 2, 2}}});
  for (const char* name : {"scale", "bias", "mean", "var"}) stat.float_constant_input(name, {1, 2});
  stat.then("Add", "n2", {"y", "var"}, "z");
  CHECK(stat.import_error() ==
        "t.onnx: node 'n2' (Add): 'var' is used as a weight and a statistic");
}

TEST_CASE("Constant's value_int, and a Cast to BOOL of a BOOL tensor, import and compute") {
  // y = x * Cast(Constant(value_int 7), FLOAT)
  OneNode constant("Constant", {});
  constant.integer("value_int", 7);
  constant.node->set_output(0, "k");
  auto* g = constant.m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  in->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(3);
  auto* cast = g->add_node();
  cast->set_op_type("Cast");
  cast->add_input("k");
  cast->add_output("kf");
  auto* to_float = cast->add_attribute();
  to_float->set_name("to");
  to_float->set_type(::onnx::AttributeProto::INT);
  to_float->set_i(::onnx::TensorProto::FLOAT);
  auto* mul = g->add_node();
  mul->set_op_type("Mul");
  mul->add_input("x");
  mul->add_input("kf");
  mul->add_output("y");
  const auto c = mxo::testing::run_imported(
      mxo::import_model(constant.m, "c.onnx"),
      {{"x", NDArray::from_vector<float>(Shape{3}, {1.0f, -2.0f, 0.5f})}});
  REQUIRE(c.size() == 1);
  CHECK(c[0].to_vector<float>() == std::vector<float>{7.0f, -14.0f, 3.5f});

  // x -> Cast(BOOL) -> Cast(BOOL) -> Cast(FLOAT): the second passes the first's 1s and 0s.
  OneNode twice("Cast", {{"x", Shape{4}}});
  twice.integer("to", ::onnx::TensorProto::BOOL);
  twice.node->set_output(0, "b");
  auto* second = twice.m.mutable_graph()->add_node();
  second->set_op_type("Cast");
  second->set_name("n2");
  second->add_input("b");
  second->add_output("b2");
  auto* to = second->add_attribute();
  to->set_name("to");
  to->set_type(::onnx::AttributeProto::INT);
  to->set_i(::onnx::TensorProto::BOOL);
  auto* third = twice.m.mutable_graph()->add_node();  // back to FLOAT: mx's outputs are float32
  third->set_op_type("Cast");
  third->add_input("b2");
  third->add_output("y");
  auto* back = third->add_attribute();
  back->set_name("to");
  back->set_type(::onnx::AttributeProto::INT);
  back->set_i(::onnx::TensorProto::FLOAT);
  const auto y = mxo::testing::run_imported(
      mxo::import_model(twice.m, "cast.onnx"),
      {{"x", NDArray::from_vector<float>(Shape{4}, {0.0f, 2.5f, -1.0f, 0.0f})}});
  CHECK(y[0].to_vector<float>() == std::vector<float>{0, 1, 1, 0});
}

TEST_CASE("tensor_to_array reads float16 from int32_data; its refusals name the tensor and why") {
  ::onnx::TensorProto half;
  half.set_data_type(::onnx::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3C00);  // 1.0
  half.add_int32_data(0xC000);  // -2.0
  const NDArray h = mxo::tensor_to_array(half, "h");
  REQUIRE(h.dtype() == DType::kFloat16);
  const auto values = h.to_vector<half_t>();
  CHECK(static_cast<float>(values[0]) == 1.0f);
  CHECK(static_cast<float>(values[1]) == -2.0f);

  auto refusal = [](const ::onnx::TensorProto& t) {
    return mx::test::error_text([&] { mxo::tensor_to_array(t, "t"); });
  };
  ::onnx::TensorProto t;
  t.set_data_type(99);
  CHECK(refusal(t) ==
        "t: element type type 99 is not supported (float, double, float16, int8, uint8, int32, "
        "int64)");
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int i = 0; i <= Shape::kMaxNdim; ++i) t.add_dims(1);
  CHECK(refusal(t) ==
        str("t: ", Shape::kMaxNdim + 1, " dimensions (at most ", Shape::kMaxNdim, " supported)"));
  t.clear_dims();
  t.add_dims(int64_t{1} << 40);
  t.add_dims(int64_t{1} << 40);
  CHECK(refusal(t) == "t: the dimensions overflow");
  t.clear_dims();
  t.add_dims(3);
  t.add_float_data(1);
  t.add_float_data(2);
  CHECK(refusal(t) == "t: 2 values stored but 3 declared");
}
