// The AMP graph pass: where it puts amp_cast / amp_multicast, the types the
// converted graph infers, that it trains (float32 gradients for float32
// master weights) close to the float32 graph, and that every operator
// declares its class as MXNet's bfloat16 lists do.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "base/strings.h"
#include "executor/executor.h"
#include "graph/amp_pass.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/registry.h"

using namespace mx;
using graph::Symbol;

namespace {

// conv [-> BatchNorm] -> relu -> pool -> flatten -> fc -> SoftmaxOutput.
Symbol small_convnet(bool batch_norm) {
  Symbol x = Symbol::variable("data");
  // No bias before BatchNorm (its gradient is zero but for rounding).
  Symbol c = Symbol::create(
      "Convolution", "conv",
      {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"no_bias", batch_norm ? "True" : "False"}}, {x});
  if (batch_norm) c = Symbol::create("BatchNorm", "bn", {{"fix_gamma", "False"}}, {c});
  Symbol a = Symbol::create("Activation", "act", {{"act_type", "relu"}}, {c});
  Symbol p = Symbol::create(
      "Pooling", "pool", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}}, {a});
  Symbol f = Symbol::create("Flatten", "flat", {}, {p});
  Symbol fc = Symbol::create("FullyConnected", "fc", {{"num_hidden", "4"}}, {f});
  return Symbol::create("SoftmaxOutput", "softmax", {}, {fc});
}

// The node named `name` in `s`.
std::shared_ptr<graph::Node> node_named(const Symbol& s, const std::string& name) {
  for (const auto& n : graph::topo_order(s.outputs()))
    if (n->name == name) return n;
  return nullptr;
}

std::string op_of(const graph::NodeEntry& e) {
  return e.node->is_variable() ? "variable" : e.node->op->def().name;
}

}  // namespace

// RNN runs in 16 bits on a GPU; on the CPU its float32 kernels (oneDNN's
// primitives) are faster than its 16-bit ones, so it stays float32 there.
TEST_CASE("amp pass: RNN in 16 bits on a GPU, in float32 on the CPU") {
  Symbol x = Symbol::variable("data");
  Symbol rnn = Symbol::create(
      "RNN", "lstm", {{"mode", "lstm"}, {"state_size", "8"}, {"num_layers", "1"}},
      {x, Symbol::variable("params"), Symbol::variable("h0"), Symbol::variable("c0")});
  Symbol fc =
      Symbol::create("FullyConnected", "fc", {{"num_hidden", "4"}, {"flatten", "False"}}, {rnn});
  const Symbol net = Symbol::create("SoftmaxOutput", "softmax", {}, {fc});
  for (DType low : {DType::kBFloat16, DType::kFloat16}) {
    CAPTURE(dtype_name(low));
    auto on_gpu = node_named(graph::convert_to_mixed_precision(net, low, DeviceKind::kGPU), "lstm");
    REQUIRE(on_gpu);
    for (const auto& in : on_gpu->inputs) {
      CHECK(op_of(in) == "amp_cast");
      CHECK(in.node->attrs.at("dtype") == dtype_name(low));
    }
    auto on_cpu = node_named(graph::convert_to_mixed_precision(net, low, DeviceKind::kCPU), "lstm");
    REQUIRE(on_cpu);
    for (const auto& in : on_cpu->inputs) CHECK(op_of(in) == "variable");
  }
}

TEST_CASE("amp pass: casts into low-precision layers and back before float32 ones") {
  const Symbol net = small_convnet(true);
  const Symbol amp = graph::convert_to_mixed_precision(net, DType::kBFloat16, DeviceKind::kCPU);
  // The arguments (master weights, data, label) are the network's.
  CHECK(amp.list_arguments() == net.list_arguments());
  CHECK(amp.list_outputs() == net.list_outputs());
  auto conv = node_named(amp, "conv");
  REQUIRE(conv);
  for (const auto& in : conv->inputs) {
    CHECK(op_of(in) == "amp_cast");
    CHECK(in.node->attrs.at("dtype") == "bfloat16");
  }
  // BatchNorm takes the bfloat16 data as it is, its gamma and beta as the
  // float32 variables they are; relu, pooling and flatten follow their
  // bfloat16 input: no casts around them.
  auto bn = node_named(amp, "bn");
  CHECK(op_of(bn->inputs[0]) == "Convolution");
  CHECK(op_of(bn->inputs[1]) == "variable");
  CHECK(op_of(bn->inputs[2]) == "variable");
  CHECK(op_of(node_named(amp, "act")->inputs[0]) == "BatchNorm");
  CHECK(op_of(node_named(amp, "flat")->inputs[0]) == "Pooling");
  CHECK(op_of(node_named(amp, "fc")->inputs[0]) == "Flatten");
  // The loss layer reads float32.
  const auto& loss_in = node_named(amp, "softmax")->inputs[0];
  CHECK(op_of(loss_in) == "amp_cast");
  CHECK(loss_in.node->attrs.at("dtype") == "float32");
  // The network itself is untouched (checkpoints save it).
  CHECK(op_of(node_named(net, "conv")->inputs[1]) == "variable");

  // Bound as the executor binds it: every argument float32.
  graph::DTypeMap f32;
  for (const auto& a : amp.list_arguments()) f32[a] = DType::kFloat32;
  CHECK(amp.infer_type(f32).outputs[0] == DType::kFloat32);
  auto internals = amp.get_internals();
  const auto names = internals.list_outputs();
  const auto all = internals.infer_type(f32);
  for (size_t i = 0; i < names.size(); ++i) {
    CAPTURE(names[i]);
    if (names[i] == "conv_output" || names[i] == "bn_output" || names[i] == "act_output" ||
        names[i] == "fc_output")
      CHECK(all.outputs[i] == DType::kBFloat16);
    // BatchNorm's batch statistics stay float32, as its parameters do.
    if (names[i] == "bn_mean" || names[i] == "bn_var") CHECK(all.outputs[i] == DType::kFloat32);
  }
  for (const auto& t : all.aux) CHECK(t == DType::kFloat32);
}

TEST_CASE("amp pass: the converted graph round-trips through MXNet's JSON") {
  const Symbol amp =
      graph::convert_to_mixed_precision(small_convnet(true), DType::kBFloat16, DeviceKind::kCPU);
  const std::string json = amp.to_json();
  CHECK(json.find("\"op\": \"amp_cast\"") != std::string::npos);
  const Symbol back = Symbol::from_json(json);
  CHECK(back.to_json() == json);
}

TEST_CASE("amp pass: a widest-type operator of mixed inputs gets one amp_multicast") {
  Symbol x = Symbol::variable("data");
  Symbol fc = Symbol::create("FullyConnected", "fc", {{"num_hidden", "3"}}, {x});
  Symbol y = Symbol::variable("other");
  Symbol sum = Symbol::create("elemwise_add", "sum", {}, {fc, y});
  const Symbol amp = graph::convert_to_mixed_precision(sum, DType::kBFloat16, DeviceKind::kCPU);
  auto add = node_named(amp, "sum");
  REQUIRE(add);
  CHECK(op_of(add->inputs[0]) == "amp_multicast");
  CHECK(add->inputs[0].node == add->inputs[1].node);
  CHECK(add->inputs[1].index == 1);
  graph::DTypeMap f32;
  for (const auto& a : amp.list_arguments()) f32[a] = DType::kFloat32;
  CHECK(amp.infer_type(f32).outputs[0] == DType::kFloat32);
  // Both inputs low: the add runs in bfloat16 and the head is cast back.
  Symbol fc2 = Symbol::create("FullyConnected", "fc2", {{"num_hidden", "3"}}, {x});
  Symbol both = Symbol::create("elemwise_add", "both", {}, {fc, fc2});
  const Symbol amp2 = graph::convert_to_mixed_precision(both, DType::kBFloat16, DeviceKind::kCPU);
  CHECK(op_of(node_named(amp2, "both")->inputs[0]) == "FullyConnected");
  CHECK(op_of(amp2.outputs()[0]) == "amp_cast");
  graph::DTypeMap f32_2;
  for (const auto& a : amp2.list_arguments()) f32_2[a] = DType::kFloat32;
  CHECK(amp2.infer_type(f32_2).outputs[0] == DType::kFloat32);
}

TEST_CASE("amp pass: an entry read by two low-precision layers is cast once") {
  Symbol x = Symbol::variable("data");
  Symbol a = Symbol::create("FullyConnected", "a", {{"num_hidden", "3"}}, {x});
  Symbol b = Symbol::create("FullyConnected", "b", {{"num_hidden", "3"}}, {x});
  const Symbol amp =
      graph::convert_to_mixed_precision(Symbol::group({a, b}), DType::kBFloat16, DeviceKind::kCPU);
  CHECK(node_named(amp, "a")->inputs[0].node == node_named(amp, "b")->inputs[0].node);
  CHECK_THROWS_AS(graph::convert_to_mixed_precision(a, DType::kFloat64, DeviceKind::kCPU),
                  InputError);
}

TEST_CASE("amp pass: bfloat16 training gives float32 gradients close to float32's") {
  if (!op::dnnl_bf16_available()) {
    MESSAGE("no bfloat16 instructions on this CPU: skipped");
    return;
  }
  // Without BatchNorm: behind one, the convolution weight's gradient is a small
  // difference of large terms, as far from float32's in bfloat16 with BatchNorm
  // in float32 as in bfloat16 (test_ops_amp compares BatchNorm's own kernels).
  const Symbol net = small_convnet(false);
  const graph::ShapeMap shapes{{"data", Shape{4, 2, 8, 8}}, {"softmax_label", Shape{4}}};
  BindOptions bind;
  bind.grad_req = {{"data", graph::GradReq::kNull}, {"softmax_label", graph::GradReq::kNull}};
  auto f32 = Executor::simple_bind(net, shapes, bind);
  auto bf16 = Executor::simple_bind(
      graph::convert_to_mixed_precision(net, DType::kBFloat16, DeviceKind::kCPU), shapes, bind);
  std::mt19937_64 rng(3);
  std::normal_distribution<float> normal(0.f, 0.5f);
  for (const auto& [name, arr] : f32->arg_dict()) {
    std::vector<float> v(static_cast<size_t>(arr.shape().size()));
    for (auto& x : v) x = name == "softmax_label" ? static_cast<float>(rng() % 4) : normal(rng);
    NDArray value = NDArray::from_vector<float>(arr.shape(), v);
    NDArray a32 = arr, a16 = bf16->arg_dict().at(name);  // handles to the bound arrays
    value.copy_to(a32);
    value.copy_to(a16);
  }
  for (auto* e : {f32.get(), bf16.get()}) {
    e->forward(true);
    e->backward();
  }
  CHECK(bf16->outputs()[0].dtype() == DType::kFloat32);
  for (const auto& [name, g32] : f32->grad_dict()) {
    if (g32.is_none()) continue;
    CAPTURE(name);
    const NDArray& g16 = bf16->grad_dict().at(name);
    REQUIRE(g16.dtype() == DType::kFloat32);  // master weights get float32 gradients
    auto a = g32.to_vector<float>(), b = g16.to_vector<float>();
    double worst = 0, scale = 1e-3;
    for (size_t i = 0; i < a.size(); ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(a[i]) - b[i]));
      scale = std::max(scale, std::abs(static_cast<double>(a[i])));
    }
    CHECK(worst / scale <= 5e-2);  // bfloat16 activations, float32 sums
  }
}

TEST_CASE("every operator declares its AMP class, as MXNet's bfloat16 lists where it can") {
  for (const op::OpDef* def : op::OpRegistry::get().list()) {
    CAPTURE(def->name);
    CHECK(static_cast<bool>(def->amp_class));
  }
  auto amp_of = [](const std::string& op, const op::AttrMap& attrs) {
    op::OpInstance inst(op, attrs);
    return inst.def().amp_class(inst.params());
  };
  using op::AmpClass;
  // BF16_FUNCS
  CHECK(amp_of("Convolution", {{"kernel", "(1, 1)"}, {"num_filter", "1"}}) ==
        AmpClass::kLowPrecision);
  CHECK(amp_of("FullyConnected", {{"num_hidden", "1"}}) == AmpClass::kLowPrecision);
  CHECK(amp_of("RNN", {{"state_size", "2"}, {"num_layers", "1"}, {"mode", "lstm"}}) ==
        AmpClass::kLowPrecision);
  // FP32_FUNCS: losses, softmax, norms, reductions, exponentials.
  const std::vector<std::pair<std::string, op::AttrMap>> float32_ops = {
      {"SoftmaxOutput", {}},
      {"LinearRegressionOutput", {}},
      {"softmax", {}},
      {"log_softmax", {}},
      {"sum", {}},
      {"mean", {}},
      {"exp", {}},
      {"log", {}},
      {"sigmoid", {}},
      {"Dropout", {}},
      {"LayerNorm", {}},
      {"Embedding", {{"input_dim", "2"}, {"output_dim", "2"}}},
      // With sequence lengths, which must not be rounded to 16 bits.
      {"RNN",
       {{"state_size", "2"}, {"num_layers", "1"}, {"mode", "lstm"}, {"use_sequence_length", "1"}}}};
  for (const auto& [op, attrs] : float32_ops) {
    CAPTURE(op);
    CHECK(amp_of(op, attrs) == AmpClass::kFloat32);
  }
  // CONDITIONAL_FP32_FUNCS: softrelu stays float32, the rest follow.
  CHECK(amp_of("Activation", {{"act_type", "softrelu"}}) == AmpClass::kFloat32);
  CHECK(amp_of("Activation", {{"act_type", "relu"}}) == AmpClass::kFollow);
  // BF16_FP32_FUNCS
  for (const char* op : {"relu", "tanh", "sqrt", "square", "abs"})
    CHECK(amp_of(op, {}) == AmpClass::kFollow);
  CHECK(amp_of("Pooling", {{"kernel", "(2, 2)"}}) == AmpClass::kFollow);
  // BatchNorm is BF16_FP32 in MXNet too, its parameters and statistics kept
  // float32 for bfloat16 data (MXNet's BatchNormType).
  CHECK(amp_of("BatchNorm", {}) == AmpClass::kFollowData);
  // WIDEST_TYPE_CASTS
  for (const char* op : {"elemwise_add", "elemwise_mul", "_equal"})
    CHECK(amp_of(op, {}) == AmpClass::kWidest);
  CHECK(amp_of("ElementWiseSum", {{"num_args", "2"}}) == AmpClass::kWidest);
}
