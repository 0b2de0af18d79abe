// int8 in ONNX: mx's int8 networks (graph/quantize_marks.h) export as QDQ
// models that ONNX Runtime runs as mx does, and import back as the same
// int8 networks; ONNX Runtime's quantizer output (QDQ and QOperator) of a
// small residual network imports as int8 convolutions that give ONNX
// Runtime's outputs (scripts/fixtures/make_onnx_quantized_fixtures.py).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <type_traits>

#include "../graph/inference_nets.h"
#include "base/error.h"
#include "error_text.h"
#include "graph/quantize_marks.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"
#include "onnx_fixtures.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"
#include "run_model.h"

using namespace mx;
using namespace mx::test_nets;
namespace mxo = mx::onnx;
using mxo::testing::read_pb;

namespace {

const std::string kDir = std::string(MX_FIXTURES_DIR) + "/onnx/quantized/";

// ||got - want|| / ||want||.
double relative_error(const NDArray& got, const NDArray& want) {
  REQUIRE(got.shape() == want.shape());
  const auto a = got.to_vector<float>(), b = want.to_vector<float>();
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    ref += double(b[i]) * b[i];
  }
  return std::sqrt(diff / ref);
}

std::map<std::string, int> op_counts(const ::onnx::ModelProto& m) {
  std::map<std::string, int> ops;
  for (const auto& n : m.graph().node()) ++ops[n.op_type()];
  return ops;
}

const ::onnx::TensorProto* initializer(const ::onnx::ModelProto& m, const std::string& name) {
  for (const auto& t : m.graph().initializer())
    if (t.name() == name) return &t;
  return nullptr;
}

// A network with random parameters, its int8 marks calibrated on `data`.
struct Int8Net {
  graph::Symbol symbol;
  std::map<std::string, NDArray> args, aux;
  NDArray data;

  Int8Net(const graph::Symbol& net, const Shape& shape, uint64_t seed) : symbol(net) {
    BindOptions options;
    options.for_training = false;
    auto exe = Executor::simple_bind(net, {{"data", shape}}, options);
    std::mt19937_64 rng(seed);
    for (const auto& [name, a] : exe->arg_dict()) {
      fill_uniform(a, rng, name == "data" ? -1.0 : -0.5, name == "data" ? 1.0 : 0.5);
      if (name == "data")
        data = a.copy();
      else
        args[name] = a.copy();
    }
    for (const auto& [name, a] : exe->aux_dict()) {
      fill_uniform(a, rng, name.find("var") != std::string::npos ? 0.5 : -0.2, 1.5);
      aux[name] = a.copy();
    }
    std::map<std::string, NDArray> with_data = args;
    with_data["data"] = data;
    mark_int8(symbol, with_data, aux);
  }

  // mx's output, in int8 (fused) or float32 (layer by layer).
  NDArray run(bool fused, op::FusedGraphStats* stats = nullptr) const {
    mxo::ImportedModel m;
    m.symbol = symbol;
    m.args = args;
    m.aux = aux;
    return mxo::testing::run_imported(m, {{"data", data}}, fused, stats)[0];
  }

  ::onnx::ModelProto export_onnx(int opset = 13) const {
    mxo::ExportOptions o;
    o.opset = opset;
    o.input_shapes["data"] = data.shape();
    return mxo::export_model(symbol, args, aux, o);
  }
};

}  // namespace

TEST_CASE("an int8 network exports as QDQ: int8 weights per channel, int32 biases") {
  // A biased convolution, a BatchNorm + ReLU, max pooling, a residual addition.
  graph::Symbol x = act(conv(var("data"), "c0", 8, 3, 1, 1, true), "r0");
  x = pool(x, "p0", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}});
  graph::Symbol h = act(bn(conv(x, "c1", 8, 3, 1, 1), "bn1"), "r1");
  h = conv(h, "c2", 8, 3, 1, 1, true);
  const graph::Symbol net = head(act(add(h, x, "sum"), "r2"), 4);
  const Int8Net n(net, Shape{2, 3, 8, 8}, 7);
  const ::onnx::ModelProto m = n.export_onnx();
  mxo::parse_model(m.SerializeAsString(), "exported");  // onnx::checker
  auto ops = op_counts(m);
  // The data for c0; r0 (read by the pooling before c1) and p0 (c1's input
  // and the addend of c2's addition), r1 (c2's input): held in int8 between
  // the layers. r2 goes through the Flatten: the head's FullyConnected
  // quantizes the Flatten's output.
  CHECK(ops["QuantizeLinear"] == 5);
  // ... and the weights of the three convolutions and the FullyConnected,
  // the biases of two convolutions and the FullyConnected.
  CHECK(ops["DequantizeLinear"] == 5 + 4 + 3);
  CHECK(ops["Conv"] == 3);
  CHECK(ops["Gemm"] == 1);

  // c0's weights: int8 per output channel, each channel's largest magnitude 127.
  const auto* w = initializer(m, "c0_weight_quantized");
  REQUIRE(w != nullptr);
  CHECK(w->data_type() == ::onnx::TensorProto::INT8);
  const NDArray wq = mxo::tensor_to_array(*w, "w");
  const auto values = wq.to_vector<int8_t>();
  const NDArray& real = n.args.at("c0_weight");
  const auto rv = real.to_vector<float>();
  const auto scales =
      mxo::tensor_to_array(*initializer(m, "c0_weight_scale"), "s").to_vector<float>();
  REQUIRE(scales.size() == 8);
  for (size_t o = 0; o < 8; ++o) {
    int largest = 0;
    for (size_t k = 0; k < 27; ++k) {
      largest = std::max(largest, std::abs(int(values[o * 27 + k])));
      CHECK(std::fabs(values[o * 27 + k] * scales[o] - rv[o * 27 + k]) <= scales[o] / 2 * 1.001f);
    }
    CHECK(largest == 127);
  }
  // The bias in int32 at the input's scale times the weights'.
  const auto* b = initializer(m, "c0_bias_quantized");
  REQUIRE(b != nullptr);
  CHECK(b->data_type() == ::onnx::TensorProto::INT32);
  const auto bias_scales =
      mxo::tensor_to_array(*initializer(m, "c0_bias_scale"), "s").to_vector<float>();
  const float data_scale =
      mxo::tensor_to_array(*initializer(m, "data_scale"), "s").to_vector<float>()[0];
  const auto data_range =
      graph::calibrated_range(*n.symbol.get_internals()["data"].outputs()[0].node);
  REQUIRE(data_range);
  // Data with negative values: int8, symmetric.
  CHECK(data_scale == doctest::Approx(std::max(-data_range->min, data_range->max) / 127));
  CHECK(initializer(m, "data_zero_point")->data_type() == ::onnx::TensorProto::INT8);
  CHECK(initializer(m, "r0_output_zero_point")->data_type() == ::onnx::TensorProto::UINT8);
  for (size_t o = 0; o < 8; ++o)
    CHECK(bias_scales[o] == doctest::Approx(data_scale * scales[o]).epsilon(1e-6));
  // The weights' float32 initializers are gone: DequantizeLinear gives them back by name.
  CHECK(initializer(m, "c0_weight") == nullptr);
  CHECK(initializer(m, "fc_weight") == nullptr);
  CHECK(initializer(m, "fc_weight_quantized") != nullptr);

  // Below opset 13 DequantizeLinear has no axis: refused.
  CHECK(mx::test::error_text<Error>([&] { n.export_onnx(11); }) ==
        "cannot export to ONNX: the int8 layers ('c0', 'c1', 'c2', 'fc') need opset 13 or later "
        "(their weights are quantized per output channel, DequantizeLinear's axis)");
}

TEST_CASE(
    "QDQ export: an int8 value first in name order; weights not in float32 fail the type check") {
  // An int8 value read by the next convolution, first in name order among
  // the tensors the ONNX nodes write (the export finds its writer by name).
  {
    const graph::Symbol net = head(conv(act(conv(var("data"), "c0", 4, 3), "a0"), "c1", 4, 3), 3);
    const Int8Net n(net, Shape{1, 3, 8, 8}, 3);
    auto ops = op_counts(n.export_onnx());
    // data, a0's output and the Flatten's output.
    CHECK(ops["QuantizeLinear"] == 3);
    CHECK(ops["DequantizeLinear"] == 3 + 3 + 1);
  }
  // Weights that are not float32 never reach the int8 choice: the types
  // are checked first (mx's data is float32).
  {
    const graph::Symbol net = head(act(conv(var("data"), "c0", 4, 3, 1, 1, true), "r0"), 3);
    Int8Net n(net, Shape{1, 3, 6, 6}, 5);
    const auto w = n.args.at("c0_weight").to_vector<float>();
    n.args["c0_weight"] = NDArray::from_vector(n.args.at("c0_weight").shape(),
                                               std::vector<double>(w.begin(), w.end()));
    CHECK(mx::test::error_text<Error>([&] { n.export_onnx(); }) ==
          "node 'c0' (Convolution): input 1: dtype float32 conflicts with float64");
  }
}

TEST_CASE("an int8 network exported as QDQ imports back as the same int8 network") {
  if (!op::dnnl_enabled()) {
    MESSAGE("skipped: no oneDNN (int8 runs in oneDNN's fused graphs)");
    return;
  }
  struct Case {
    const char* name;
    graph::Symbol net;
    Shape data;
    int convolutions;
  };
  for (const auto& c :
       {Case{"ResNet v2", resnet_v2(), Shape{2, 3, 16, 16}, 12},
        Case{"ResNet v1 blocks, groups, tanh, sigmoid", mixed_net(), Shape{3, 3, 12, 12}, 7}}) {
    INFO(std::string(c.name));
    const Int8Net n(c.net, c.data, 11);
    op::FusedGraphStats stats;
    const NDArray int8 = n.run(true, &stats);
    CHECK(stats.int8_convolutions == c.convolutions);
    const mxo::ImportedModel back =
        mxo::import_model(mxo::parse_model(n.export_onnx().SerializeAsString(), "x"), "qdq.onnx");
    CHECK(back.warnings.empty());
    // The convolutions and the head's FullyConnected.
    CHECK(graph::check_quantization_marks(back.symbol, "qdq.onnx") == c.convolutions + 1);
    op::FusedGraphStats back_stats;
    const NDArray again =
        mxo::testing::run_imported(back, {{"data", n.data}}, true, &back_stats)[0];
    CHECK(back_stats.int8_convolutions == c.convolutions);
    CHECK(back_stats.int8_fully_connected == 1);
    const double error = relative_error(again, int8);
    MESSAGE(std::string(c.name), ": imported QDQ export against the int8 network, relative error ",
            error);
    CHECK(error < 2e-3);
    // Both are int8 within int8's rounding of float32.
    CHECK(relative_error(again, n.run(false)) < 0.03);
  }
}

TEST_CASE("mx's QDQ exports of int8 checkpoints give ONNX Runtime's outputs") {
  struct Case {
    const char* name;
    int convolutions;
    const char* weight;
  };
  for (const auto& k :
       {Case{"mx_export", 4, "conv1_weight"}, Case{"mx_export_mixed", 5, "c0_weight"}}) {
    CAPTURE(std::string(k.name));
    const std::string dir = kDir + k.name;
    const auto c = mxo::testing::load_checkpoint(dir + "/model", "0000");
    CHECK(graph::check_quantization_marks(c.symbol, "model-symbol.json") == k.convolutions);
    const NDArray input = read_pb(dir + "/input_0.pb"), ort = read_pb(dir + "/output_0.pb");
    // The exporter still writes the model ONNX Runtime ran (else regenerate the fixtures).
    mxo::ExportOptions o;
    o.input_shapes["data"] = Shape{1, 3, 10, 10};
    o.doc = "Exported by mx-export from model-0000.params";
    CHECK(mxo::export_model(c.symbol, c.args, c.aux, o).SerializeAsString() ==
          mxo::read_model(dir + "/model.onnx").SerializeAsString());
    // mx in float32 and int8 against ONNX Runtime on the QDQ model.
    const double float_error = relative_error(mxo::testing::run_checkpoint(c, input), ort);
    CHECK(float_error > 1e-4);  // ONNX Runtime ran it quantized
    if (!op::dnnl_enabled()) continue;
    const NDArray int8 = mxo::testing::run_checkpoint(c, input, true);
    const double error = relative_error(int8, ort);
    MESSAGE(std::string(k.name), ": ONNX Runtime on the QDQ export against mx in int8 ", error,
            ", in float32 ", float_error);
    CHECK(error < float_error / 2);
    CHECK(error < 5e-3);
    // The export imports back as the int8 network.
    const mxo::ImportedModel back = mxo::import_model(dir + "/model.onnx");
    CHECK(back.warnings.empty());
    CHECK(back.args.count(k.weight) == 1);  // the parameters' names come back
    CHECK(graph::check_quantization_marks(back.symbol, "model.onnx") == k.convolutions);
    const NDArray again = mxo::testing::run_imported(back, {{"data", input}}, true)[0];
    CHECK(relative_error(again, int8) < 2e-3);
  }
}

TEST_CASE("ONNX Runtime's quantizer output imports as int8 convolutions with its outputs") {
  struct Case {
    const char* name;
    bool asymmetric;           // uint8 activations with zero points (ONNX Runtime's default)
    int int8_fully_connected;  // the QOperator format's QLinearMatMul head runs in int8
  };
  for (const auto& c : {Case{"ort_qdq", true, 0}, Case{"ort_qdq_symmetric", false, 0},
                        Case{"ort_qoperator", true, 1}}) {
    CAPTURE(c.name);
    const std::string dir = kDir + c.name;
    const mxo::ImportedModel m = mxo::import_model(dir + "/model.onnx");
    CHECK(graph::check_quantization_marks(m.symbol, c.name) == 3 + c.int8_fully_connected);
    REQUIRE(m.inputs.size() == 1);
    // The int8 initializers become float32 parameters, named without "_quantized".
    CHECK(m.args.count("conv1.weight") == 1);
    CHECK(m.args.at("conv1.weight").dtype() == DType::kFloat32);
    // The input has negative values: with a zero point, mx holds it as
    // symmetric int8 over the same range, and says so.
    std::string warnings;
    for (const auto& w : m.warnings) warnings += w + "\n";
    INFO(warnings);
    if (c.asymmetric) {
      REQUIRE(m.warnings.size() == 1);
      CHECK(m.warnings[0].find(dir + "/model.onnx: node 'conv1") == 0);
      CHECK(m.warnings[0].find("(asymmetric); mx holds it as symmetric int8 over the same range") !=
            std::string::npos);
    } else {
      CHECK(m.warnings.empty());
    }
    const NDArray input = read_pb(dir + "/input_0.pb"), ort = read_pb(dir + "/output_0.pb");
    const NDArray float_ort = read_pb(dir + "/float_output_0.pb");
    // Layer by layer (float32, the dequantized weights): the float model's
    // output within the weights' and activations' quantization.
    const NDArray plain = mxo::testing::run_imported(m, {{"input", input}})[0];
    CHECK(relative_error(plain, float_ort) < 0.03);
    if (!op::dnnl_enabled()) continue;
    op::FusedGraphStats stats;
    const NDArray int8 = mxo::testing::run_imported(m, {{"input", input}}, true, &stats)[0];
    CHECK(stats.int8_convolutions == 3);
    CHECK(stats.int8_fully_connected == c.int8_fully_connected);
    // mx's int8 gives ONNX Runtime's int8 within the rounding of the values
    // that mx keeps in float32 and ONNX Runtime quantizes (the residual
    // addition and what follows it), and on another grid for the
    // asymmetric input: within 1%, closer than the float model is.
    const double error = relative_error(int8, ort), quantized = relative_error(ort, float_ort);
    MESSAGE(std::string(c.name), ": against ONNX Runtime, mx int8 ", error, ", mx float32 ",
            relative_error(plain, ort), "; ONNX Runtime against the float model ", quantized);
    CHECK(error < 0.01);
    CHECK(error < 0.8 * quantized);
  }
}

TEST_CASE("a quantized graph output gives the integers of its dequantized value") {
  // ONNX Runtime's QOperator model without its last DequantizeLinear: the
  // output is the uint8 tensor itself.
  const std::string dir = kDir + "ort_qoperator";
  ::onnx::ModelProto m = mxo::read_model(dir + "/model.onnx");
  const mxo::ImportedModel with_float_output = mxo::import_model(m, "f.onnx");
  auto* g = m.mutable_graph();
  REQUIRE(g->node(g->node_size() - 1).op_type() == "DequantizeLinear");
  const ::onnx::NodeProto last = g->node(g->node_size() - 1);
  g->mutable_node()->RemoveLast();
  g->mutable_output(0)->set_name(last.input(0));
  g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      ::onnx::TensorProto::UINT8);
  const mxo::ImportedModel quantized = mxo::import_model(m, "q.onnx");
  const NDArray input = read_pb(dir + "/input_0.pb");
  const NDArray real = mxo::testing::run_imported(with_float_output, {{"input", input}})[0];
  const NDArray q = mxo::testing::run_imported(quantized, {{"input", input}})[0];
  REQUIRE(q.dtype() == DType::kUint8);
  REQUIRE(q.shape() == real.shape());
  // The removed DequantizeLinear's scale and zero point.
  float scale = 0;
  int zero = 0;
  for (const auto& t : g->initializer()) {
    if (t.name() == last.input(1)) scale = mxo::tensor_to_array(t, "").to_vector<float>()[0];
    if (t.name() == last.input(2)) zero = mxo::tensor_to_array(t, "").to_vector<uint8_t>()[0];
  }
  REQUIRE(scale > 0);
  const auto got = q.to_vector<uint8_t>();
  const auto values = real.to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    // mx holds the tensor as its real value; quantized again, as ONNX Runtime's QLinear
    // operators round and saturate their output.
    const int want = std::clamp(static_cast<int>(std::nearbyint(values[i] / scale)) + zero, 0, 255);
    CHECK(static_cast<int>(got[i]) == want);
  }
}

namespace {

// An initializer of `values` (float32, uint8 or int8 by T) with `dims`.
template <typename T>
void add_initializer(::onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                     const std::vector<T>& values) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(std::is_same_v<T, float>     ? ::onnx::TensorProto::FLOAT
                   : std::is_same_v<T, uint8_t> ? ::onnx::TensorProto::UINT8
                                                : ::onnx::TensorProto::INT8);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

::onnx::NodeProto* add_node(::onnx::GraphProto* g, const std::string& op,
                            const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out + "_node");
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

void set_value_info(::onnx::ValueInfoProto* v, const std::string& name, std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

}  // namespace

TEST_CASE("QLinearMatMul of 2-D data and constant int8 weights runs as an int8 FullyConnected") {
  // x (4 x 16) -> QuantizeLinear (uint8) -> QLinearMatMul with int8 weights
  // (16 x 6, a scale per column) -> DequantizeLinear, as ONNX Runtime's
  // quantizer writes a MatMul layer in its QOperator format.
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("qmatmul");
  set_value_info(g->add_input(), "x", {4, 16});
  set_value_info(g->add_output(), "y", {4, 6});
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> weight(-127, 127);
  std::vector<int8_t> b(16 * 6);
  for (auto& v : b) v = static_cast<int8_t>(weight(rng));
  std::vector<float> b_scale(6);
  for (size_t j = 0; j < b_scale.size(); ++j) b_scale[j] = 0.004f * static_cast<float>(j + 1);
  add_initializer<float>(g, "x_scale", {}, {0.02f});
  add_initializer<uint8_t>(g, "x_zero", {}, {0});
  add_initializer<int8_t>(g, "b", {16, 6}, b);
  add_initializer<float>(g, "b_scale", {6}, b_scale);
  add_initializer<int8_t>(g, "b_zero", {6}, std::vector<int8_t>(6, 0));
  add_initializer<float>(g, "y_scale", {}, {0.05f});
  add_initializer<uint8_t>(g, "y_zero", {}, {128});
  add_node(g, "QuantizeLinear", {"x", "x_scale", "x_zero"}, "xq");
  add_node(g, "QLinearMatMul",
           {"xq", "x_scale", "x_zero", "b", "b_scale", "b_zero", "y_scale", "y_zero"}, "yq");
  add_node(g, "DequantizeLinear", {"yq", "y_scale", "y_zero"}, "y");
  mxo::parse_model(m.SerializeAsString(), "qmatmul");  // onnx::checker

  const mxo::ImportedModel back = mxo::import_model(m, "qmatmul.onnx");
  CHECK(back.warnings.empty());
  CHECK(graph::check_quantization_marks(back.symbol, "qmatmul") == 1);
  std::uniform_real_distribution<float> u(0.0f, 5.0f);
  std::vector<float> xv(4 * 16);
  for (auto& v : xv) v = u(rng);
  const NDArray x = NDArray::from_vector<float>(Shape{4, 16}, xv);
  // float32 layer by layer: the data's real value (mx holds a quantized
  // tensor as its value, unrounded) times the weights' real values.
  const NDArray plain = mxo::testing::run_imported(back, {{"x", x}})[0];
  std::vector<float> want(4 * 6, 0.0f);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) {
      for (int k = 0; k < 16; ++k) want[i * 6 + j] += xv[i * 16 + k] * b[k * 6 + j] * b_scale[j];
    }
  const auto p = plain.to_vector<float>();
  for (size_t i = 0; i < want.size(); ++i) CHECK(p[i] == doctest::Approx(want[i]).epsilon(1e-4));
  if (!op::dnnl_enabled()) return;
  op::FusedGraphStats stats;
  const NDArray int8 = mxo::testing::run_imported(back, {{"x", x}}, true, &stats)[0];
  CHECK(stats.int8_fully_connected == 1);
  // In int8: the data rounded to its steps of 0.02 (the weights are int8
  // already), within 1% of the unrounded product.
  const double error = relative_error(int8, plain);
  MESSAGE("int8 FullyConnected against float32: relative error ", error);
  CHECK(error < 0.01);
}

TEST_CASE("QuantizeLinear exports as ONNX's QuantizeLinear and imports back to the same integers") {
  const graph::Symbol q =
      graph::Symbol::create("QuantizeLinear", "q", {{"axis", "1"}},
                            {graph::Symbol::variable("data"), graph::Symbol::variable("scale"),
                             graph::Symbol::variable("zero_point")});
  const NDArray data =
      NDArray::from_vector<float>(Shape{2, 3}, {-2.5f, 0.5f, 1.5f, 3.0f, 300.0f, -300.0f});
  struct Case {
    NDArray scale, zero;
  };
  for (const Case& c : {Case{NDArray::from_vector<float>(Shape{1}, {0.5f}),
                             NDArray::from_vector<uint8_t>(Shape{1}, {10})},
                        Case{NDArray::from_vector<float>(Shape{3}, {1.0f, 0.5f, 2.0f}),
                             NDArray::from_vector<int8_t>(Shape{3}, {0, -5, 7})}}) {
    CAPTURE(c.scale.size());
    const std::map<std::string, NDArray> args{{"scale", c.scale}, {"zero_point", c.zero}};
    mxo::ExportOptions options;
    options.input_shapes = {{"data", data.shape()}};
    const ::onnx::ModelProto m = mxo::export_model(q, args, {}, options);
    mxo::parse_model(m.SerializeAsString(), "exported");  // onnx::checker
    CHECK(op_counts(m)["QuantizeLinear"] == 1);
    CHECK(
        m.graph().output(0).type().tensor_type().elem_type() ==
        (c.zero.dtype() == DType::kUint8 ? ::onnx::TensorProto::UINT8 : ::onnx::TensorProto::INT8));
    const mxo::ImportedModel back = mxo::import_model(m, "q.onnx");
    const NDArray want = op::invoke("QuantizeLinear", {data, c.scale, c.zero}, {{"axis", "1"}})[0];
    const NDArray got = mxo::testing::run_imported(back, {{"data", data}})[0];
    REQUIRE(got.dtype() == want.dtype());
    CHECK(op::invoke("Cast", {got}, {{"dtype", "float32"}})[0].to_vector<float>() ==
          op::invoke("Cast", {want}, {{"dtype", "float32"}})[0].to_vector<float>());
  }
}

TEST_CASE("quantized patterns mx cannot map import as float32 with a warning, or are refused") {
  const std::string path = kDir + "ort_qdq/model.onnx";
  SUBCASE("weights with a nonzero zero point") {
    ::onnx::ModelProto m = mxo::read_model(path);
    bool found = false;
    for (auto& t : *m.mutable_graph()->mutable_initializer())
      if (t.name() == "conv2.weight_zero_point") {
        if (t.has_raw_data()) {
          std::string raw = t.raw_data();
          for (char& b : raw) b = 3;
          t.set_raw_data(raw);
        }
        for (int i = 0; i < t.int32_data_size(); ++i) t.set_int32_data(i, 3);
        found = true;
      }
    REQUIRE(found);
    const mxo::ImportedModel back = mxo::import_model(m, "w.onnx");
    CHECK(graph::check_quantization_marks(back.symbol, "w.onnx") == 2);
    std::vector<std::string> float_layers;
    for (const auto& w : back.warnings)
      if (w.find("runs in float32") != std::string::npos) float_layers.push_back(w);
    REQUIRE(float_layers.size() == 1);
    CHECK(float_layers[0] ==
          "w.onnx: node 'conv2' (Conv) runs in float32: its weights are int8 with a nonzero "
          "zero point, and mx's int8 convolutions take symmetric int8 weights");
  }
  SUBCASE("an int32 quantized graph output") {
    ::onnx::ModelProto m = mxo::read_model(kDir + "ort_qoperator/model.onnx");
    auto* g = m.mutable_graph();
    REQUIRE(g->node(g->node_size() - 1).op_type() == "DequantizeLinear");
    auto* last = g->mutable_node(g->node_size() - 1);
    // Quantize the float output again, to int32 (QuantizeLinear allows it from opset 21 only,
    // but mx reads the type from the zero point).
    const std::string y = last->output(0);
    auto* zero = g->add_initializer();
    zero->set_name("int32_zero");
    zero->set_data_type(::onnx::TensorProto::INT32);
    zero->add_int32_data(0);
    auto* scale = g->add_initializer();
    scale->set_name("int32_scale");
    scale->set_data_type(::onnx::TensorProto::FLOAT);
    scale->add_float_data(0.5f);
    auto* q = g->add_node();
    q->set_op_type("QuantizeLinear");
    q->set_name("to_int32");
    q->add_input(y);
    q->add_input("int32_scale");
    q->add_input("int32_zero");
    q->add_output("y_int32");
    g->mutable_output(0)->set_name("y_int32");
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        ::onnx::TensorProto::INT32);
    CHECK(mx::test::error_text<Error>([&] { mxo::import_model(m, "q.onnx"); }) ==
          "q.onnx: graph output 'y_int32' is quantized to int32 (mx's quantized outputs are uint8 "
          "or int8)");
  }
  SUBCASE("a quantized tensor into an operator that does not take one") {
    ::onnx::ModelProto m = mxo::read_model(kDir + "ort_qoperator/model.onnx");
    std::string in;
    for (auto& n : *m.mutable_graph()->mutable_node())
      if (n.op_type() == "Flatten") {
        n.set_op_type("Relu");
        in = n.input(0);
      }
    REQUIRE(!in.empty());
    CHECK(mx::test::error_text<Error>([&] { mxo::import_model(m, "r.onnx"); }) ==
          "r.onnx: node 'flatten' (Relu): input '" + in +
              "' is a quantized (uint8) tensor, which mx reads only through DequantizeLinear, the "
              "QLinear operators, MaxPool and the shape operators");
  }
}

namespace {

// A model reading float input "x" of `dims` and writing float "y".
::onnx::ModelProto float_model(const std::vector<int64_t>& dims) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  set_value_info(g->add_input(), "x", dims);
  auto* y = g->add_output();  // float32, its shape left to the import
  y->set_name("y");
  y->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  return m;
}

int count_ops(const graph::Symbol& s, const std::string& op) {
  int n = 0;
  for (const auto& node : graph::topo_order(s.outputs()))
    if (!node->is_variable() && node->op->def().name == op) ++n;
  return n;
}

}  // namespace

TEST_CASE("QuantizeLinear and DequantizeLinear of constants, zero points, ranges and saturation") {
  SUBCASE("QuantizeLinear of a constant: half to even, saturated, per tensor") {
    ::onnx::ModelProto m = float_model({6});
    auto* g = m.mutable_graph();
    add_initializer<float>(g, "c", {6}, {-1.3f, 0.25f, 0.75f, 2.5f, 300, -300});
    add_initializer<float>(g, "s", {}, {0.5f});
    add_initializer<int8_t>(g, "z", {}, {0});
    add_node(g, "QuantizeLinear", {"c", "s", "z"}, "cq");
    add_node(g, "DequantizeLinear", {"cq", "s", "z"}, "cr");
    add_node(g, "Add", {"x", "cr"}, "y");
    const auto y = mxo::testing::run_imported(mxo::import_model(m, "q.onnx"),
                                              {{"x", NDArray::zeros(Shape{6})}})[0];
    CHECK(y.to_vector<float>() == std::vector<float>{-1.5f, 0, 1, 2.5f, 63.5f, -64});
  }
  SUBCASE("DequantizeLinear without a zero point reads uint8 from 0") {
    ::onnx::ModelProto m = float_model({3});
    auto* g = m.mutable_graph();
    add_initializer<uint8_t>(g, "c", {3}, {0, 10, 255});
    add_initializer<float>(g, "s", {}, {0.25f});
    add_node(g, "DequantizeLinear", {"c", "s"}, "cr");
    add_node(g, "Add", {"x", "cr"}, "y");
    const auto y = mxo::testing::run_imported(mxo::import_model(m, "q.onnx"),
                                              {{"x", NDArray::zeros(Shape{3})}})[0];
    CHECK(y.to_vector<float>() == std::vector<float>{0, 2.5f, 63.75f});
  }
  SUBCASE("symmetric int8 covers +-127 steps; its value's node gets that range") {
    ::onnx::ModelProto m = float_model({4});
    auto* g = m.mutable_graph();
    add_initializer<float>(g, "s", {}, {0.5f});
    add_initializer<int8_t>(g, "z", {}, {0});
    add_node(g, "QuantizeLinear", {"x", "s", "z"}, "xq");
    add_node(g, "DequantizeLinear", {"xq", "s", "z"}, "y");
    const mxo::ImportedModel back = mxo::import_model(m, "q.onnx");
    const auto range = graph::calibrated_range(*back.symbol.get_internals()["x"].outputs()[0].node);
    REQUIRE(range);
    CHECK(range->min == -63.5f);
    CHECK(range->max == 63.5f);
  }
  SUBCASE("uint8 from 0 saturates negative values: a ReLU where the value may have some") {
    // Relu then MaxPool: nonnegative already, nothing added.
    ::onnx::ModelProto pooled = float_model({1, 1, 2, 2});
    auto* g = pooled.mutable_graph();
    add_initializer<float>(g, "s", {}, {0.1f});
    add_initializer<uint8_t>(g, "z", {}, {0});
    add_node(g, "Relu", {"x"}, "r");
    add_node(g, "MaxPool", {"r"}, "p")->MergeFrom([] {
      ::onnx::NodeProto k;
      auto* a = k.add_attribute();
      a->set_name("kernel_shape");
      a->set_type(::onnx::AttributeProto::INTS);
      a->add_ints(1);
      a->add_ints(1);
      return k;
    }());
    add_node(g, "QuantizeLinear", {"p", "s", "z"}, "pq");
    add_node(g, "DequantizeLinear", {"pq", "s", "z"}, "y");
    CHECK(count_ops(mxo::import_model(pooled, "q.onnx").symbol, "Activation") == 1);
    // Relu then Neg: negative again, so a ReLU gives ONNX's saturation to 0.
    ::onnx::ModelProto negated = float_model({4});
    g = negated.mutable_graph();
    add_initializer<float>(g, "s", {}, {0.1f});
    add_initializer<uint8_t>(g, "z", {}, {0});
    add_node(g, "Relu", {"x"}, "r");
    add_node(g, "Neg", {"r"}, "n");
    add_node(g, "QuantizeLinear", {"n", "s", "z"}, "nq");
    add_node(g, "DequantizeLinear", {"nq", "s", "z"}, "y");
    const mxo::ImportedModel back = mxo::import_model(negated, "q.onnx");
    CHECK(count_ops(back.symbol, "Activation") == 2);
    const auto y = mxo::testing::run_imported(
        back, {{"x", NDArray::from_vector(Shape{4}, std::vector<float>{-1, 0, 0.5f, 2})}})[0];
    CHECK(y.to_vector<float>() == std::vector<float>(4, 0.0f));
  }
  SUBCASE("QLinearMatMul of 4-D data quantized per row (its second-last axis)") {
    ::onnx::ModelProto m = float_model({1, 1, 2, 2});
    auto* g = m.mutable_graph();
    add_initializer<uint8_t>(g, "a", {1, 1, 2, 3}, {1, 3, 5, 2, 4, 6});
    add_initializer<float>(g, "as", {2}, {0.5f, 0.25f});
    add_initializer<uint8_t>(g, "az", {2}, {1, 2});
    add_initializer<int8_t>(g, "b", {3, 2}, {1, -1, 2, 0, 3, 1});
    add_initializer<float>(g, "bs", {}, {0.1f});
    add_initializer<int8_t>(g, "bz", {}, {0});
    add_initializer<float>(g, "ys", {}, {0.01f});
    add_initializer<uint8_t>(g, "yz", {}, {128});
    add_node(g, "QLinearMatMul", {"a", "as", "az", "b", "bs", "bz", "ys", "yz"}, "pq");
    add_node(g, "DequantizeLinear", {"pq", "ys", "yz"}, "p");
    add_node(g, "Add", {"x", "p"}, "y");
    // Rows (0, 1, 2) and (0, 0.5, 1) times b's real values.
    const auto y = mxo::testing::run_imported(mxo::import_model(m, "q.onnx"),
                                              {{"x", NDArray::zeros(Shape{1, 1, 2, 2})}})[0];
    const std::vector<float> want = {0.8f, 0.2f, 0.4f, 0.1f};
    const auto got = y.to_vector<float>();
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
  }
  SUBCASE("QLinearConv: one output scale, constant weights") {
    auto conv = [](bool weights_constant, std::vector<float> y_scale) {
      ::onnx::ModelProto m = float_model({1, 1, 3, 3});
      auto* g = m.mutable_graph();
      add_initializer<float>(g, "xs", {}, {0.1f});
      add_initializer<uint8_t>(g, "xz", {}, {0});
      if (weights_constant)
        add_initializer<int8_t>(g, "w", {2, 1, 1, 1}, {3, -5});
      else
        add_node(g, "QuantizeLinear", {"x", "ws", "wz"}, "w");
      add_initializer<float>(g, "ws", {}, {0.2f});
      add_initializer<int8_t>(g, "wz", {}, {0});
      const auto n = static_cast<int64_t>(y_scale.size());
      add_initializer<float>(g, "ys", n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n},
                             y_scale);
      add_initializer<uint8_t>(g, "yz", n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n},
                               std::vector<uint8_t>(y_scale.size(), 0));
      add_node(g, "QuantizeLinear", {"x", "xs", "xz"}, "xq");
      add_node(g, "QLinearConv", {"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"}, "yq");
      add_node(g, "DequantizeLinear", {"yq", "ys", "yz"}, "y");
      return mx::test::error_text<Error>([&] { mxo::import_model(m, "c.onnx"); });
    };
    CHECK(conv(true, {0.5f}) == "(no error)");
    CHECK(conv(true, {0.5f, 0.25f}) ==
          "c.onnx: node 'yq_node' (QLinearConv): QLinearConv's input "
          "and output scales are one value each");
    CHECK(conv(false, {0.5f}) ==
          "c.onnx: node 'yq_node' (QLinearConv): the weights must be a constant");
  }
}
