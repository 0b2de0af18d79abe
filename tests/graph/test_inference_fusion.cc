// The inference fusion pass (graph/fuse_inference.h) and the fused oneDNN
// graph it makes (op/dnnl/dnnl_inference_graph.h): an executor bound with
// fuse_inference must give what the layer-by-layer executor gives, on the
// shapes of the networks that use it (ResNet v1 and v2 blocks, grouped and
// strided convolutions, every pooling convention), and follow the
// parameters when they change.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <tuple>

#include "base/error.h"
#include "engine/engine.h"
#include "executor/executor.h"
#include "graph/fuse_inference.h"
#include "graph/plan_graph.h"
#include "inference_nets.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/fused_inference_op.h"
#include "op/nn/activation_table.h"

using namespace mx;
using namespace mx::graph;

using namespace mx::test_nets;

TEST_CASE("a fused ResNet v2 gives the layer-by-layer outputs") {
  TwoWays net(resnet_v2(), Shape{2, 3, 16, 16});
  if (op::dnnl_enabled()) {
    // Everything from the data's BatchNorm to the global pooling is one node.
    CHECK(net.fused->fused_nodes() == 1);
  } else {
    CHECK(net.fused->fused_nodes() == 0);
  }
  CHECK(net.plain->fused_nodes() == 0);
  check_same_outputs(*net.plain, *net.fused);
}

namespace {

// What the fusion pass makes of `net` bound to `data`: the one fused node's
// summary, and how many nodes it left alone.
struct FusedOnce {
  op::FusedInferenceSummary summary;
  int fused_layers = 0, other_nodes = 0;
};

FusedOnce fuse_once(const Symbol& net, const Shape& data) {
  IndexedGraph g(net.outputs());
  ShapeMap shapes;
  const auto args = net.list_arguments();
  const auto inferred = net.infer_shape({{"data", data}});
  for (size_t i = 0; i < args.size(); ++i) shapes[args[i]] = inferred.arguments[i];
  const auto aux = net.list_auxiliary_states();
  for (size_t i = 0; i < aux.size(); ++i) shapes[aux[i]] = inferred.aux[i];
  EntryTypes entries = infer_bound_entries(g, shapes, {});
  InferenceFusion fused = fuse_for_inference(g, entries.shapes, entries.dtypes);
  REQUIRE(fused.fused_nodes == 1);
  IndexedGraph rewritten(fused.heads);
  std::optional<op::FusedInferenceSummary> summary;
  FusedOnce out;
  for (uint32_t n = 0; n < rewritten.num_nodes(); ++n) {
    const Node& node = rewritten.node(n);
    if (node.is_variable()) continue;
    if (auto s = op::fused_inference_summary(*node.op))
      summary = s;
    else
      ++out.other_nodes;
  }
  REQUIRE(summary);
  out.summary = *summary;
  out.fused_layers = fused.fused_layers;
  return out;
}

}  // namespace

TEST_CASE("what the fused ResNet v2 graph folds, fuses and reorders") {
  if (!op::dnnl_enabled()) return;
  const FusedOnce fused = fuse_once(resnet_v2(), Shape{2, 3, 16, 16});
  const op::FusedInferenceSummary* summary = &fused.summary;
  CHECK(fused.other_nodes == 2);  // Flatten and FullyConnected stay as they were
  // conv0, three convolutions per unit and two projections.
  CHECK(summary->convolutions == 12);
  // bn0 after conv0, bn2 and bn3 of each unit; the units' bn1 and bn_data,
  // bn_last follow an addition or the data.
  CHECK(summary->folded_batch_norms == 7);
  // relu0 and each unit's relu2, relu3 as post-ops; relu1 of each unit and
  // relu_last with their BatchNorm.
  CHECK(summary->fused_activations == 11);
  CHECK(summary->fused_additions == 3);
  // No int8 marks: every layer in float32.
  CHECK(summary->int8_convolutions == 0);
  CHECK(summary->int8_fully_connected == 0);
  // The image into the first convolution's layout, the pooled features out.
  CHECK(summary->reorders <= 2);
  CHECK(summary->layers == fused.fused_layers);
}

TEST_CASE("a fused network whose 3x3 convolutions run as Winograd") {
  // Two basic blocks of 32 channels on 8 images of 16x16, where Winograd
  // wins with its weights kept (op/dnnl/dnnl_descs.h), and on one image
  // (16 tiles of 4x4, oneDNN's F(2x2) kernel). The first convolution takes
  // 16 channels: too few, it stays direct.
  Symbol x = conv(var("data"), "c0", 32, 3, 1, 1);
  x = act(bn(x, "bn0"), "relu0");
  x = unit_v1(x, "u1", 32, 1);
  x = unit_v1(x, "u2", 32, 1);
  const Symbol net = head(x, 4);
  const Shape data{8, 16, 16, 16};
  TwoWays both(net, data, 3);
  check_same_outputs(*both.plain, *both.fused);
  if (!op::dnnl_enabled() || !op::dnnl_winograd_enabled()) return;
  const FusedOnce fused = fuse_once(net, data);
  CHECK(fused.summary.convolutions == 5);
  const FusedOnce one_image = fuse_once(net, Shape{1, 16, 16, 16});
  if (op::dnnl_winograd_available()) {
    CHECK(fused.summary.winograd_convolutions == 4);
    CHECK(one_image.summary.winograd_convolutions == 4);
  } else {
    CHECK(fused.summary.winograd_convolutions == 0);
  }
  TwoWays one(net, Shape{1, 16, 16, 16}, 3);
  check_same_outputs(*one.plain, *one.fused);
  const op::ScopedWinograd off(false);
  CHECK(fuse_once(net, data).summary.winograd_convolutions == 0);
  TwoWays direct(net, data, 3);
  check_same_outputs(*direct.plain, *direct.fused);
}

TEST_CASE("fused graphs in bfloat16 stay within bfloat16's rounding of float32") {
  if (!op::dnnl_enabled() || !op::dnnl_bf16_available()) {
    MESSAGE("skipped: no oneDNN, or a CPU without bfloat16 instructions");
    return;
  }
  // bfloat16 keeps 8 significant bits (relative rounding 2^-9 = 0.2%); a
  // few layers of sums in float32 stay within a few percent of the outputs.
  for (const auto& [name, net, data] :
       {std::tuple{"ResNet v2", resnet_v2(), Shape{2, 3, 16, 16}},
        std::tuple{"ResNet v1 blocks, groups, tanh, sigmoid", mixed_net(), Shape{3, 3, 12, 12}}}) {
    INFO(std::string(name));
    TwoWays both(net, data, 5, /*bfloat16=*/true);
    REQUIRE(both.fused->fused_nodes() == 1);
    const double worst = check_same_outputs(*both.plain, *both.fused, 3e-2);
    MESSAGE(std::string(name), ": worst relative difference from float32 ", worst);
    CHECK(worst > 1e-5);  // it really ran in bfloat16
  }
}

TEST_CASE("a fused network of ResNet v1 blocks, groups, tanh, sigmoid and 'full' pooling") {
  TwoWays net(mixed_net(), Shape{3, 3, 12, 12}, 7);
  CHECK(net.fused->fused_nodes() == (op::dnnl_enabled() ? 1 : 0));
  check_same_outputs(*net.plain, *net.fused);
}

TEST_CASE("every activation kind after a convolution: fused ones give the layer-by-layer values") {
  // One row of op/nn/activation_table.h each: a fusable kind runs as the
  // convolution's oneDNN post-op, the others as a node of their own.
  for (const op::ActivationKind& kind : op::kActivationKinds) {
    CAPTURE(kind.name);
    Symbol x = act(conv(var("data"), "c", 8, 3, 1, 1), "a", kind.name);
    TwoWays two(head(conv(x, "c2", 4, 1), 3), Shape{2, 3, 6, 6}, 5);
    CHECK(two.fused->fused_nodes() == (op::dnnl_enabled() ? (kind.fusable ? 1 : 2) : 0));
    check_same_outputs(*two.plain, *two.fused);
  }
}

TEST_CASE("values read outside a fused run are handed back: an inner output as a second head") {
  Symbol c = conv(var("data"), "c", 8, 3, 1, 1);
  Symbol inner = act(bn(c, "bn"), "relu");
  Symbol outer = conv(inner, "c2", 8, 3, 1, 1);
  Symbol net = Symbol::group({head(outer, 4), inner});
  TwoWays two(net, Shape{2, 3, 8, 8}, 3);
  check_same_outputs(*two.plain, *two.fused);
}

TEST_CASE("a convolution whose own input is its residual addend: y = conv(x) + x") {
  Symbol x = act(conv(var("data"), "c0", 8, 3, 1, 1), "r0");
  Symbol y = add(conv(x, "c1", 8, 3, 1, 1), x, "res");
  y = add(y, conv(y, "c2", 8, 1), "res2");  // and with the addend on the left
  TwoWays two(head(y, 3), Shape{2, 3, 6, 6}, 13);
  check_same_outputs(*two.plain, *two.fused);
}

TEST_CASE("the fused graph follows new weights and statistics (folded BatchNorm included)") {
  TwoWays net(resnet_v2(), Shape{2, 3, 16, 16}, 5);
  check_same_outputs(*net.plain, *net.fused);
  // Weights are prepared (folded, reordered) once per content, not per run.
  const int prepared = net.fused->fused_stats().weight_preparations;
  CHECK(prepared > 0);
  check_same_outputs(*net.plain, *net.fused);
  CHECK(net.fused->fused_stats().weight_preparations == prepared);
  std::mt19937_64 rng(11);
  // conv1 of s1u1 is followed by bn2, which is folded into its weights.
  fill_uniform(net.plain->arg_dict().at("s1u1_conv1_weight"), rng, -1, 1);
  fill_uniform(net.plain->arg_dict().at("s1u1_bn2_gamma"), rng, 0.5, 2);
  fill_uniform(net.plain->aux_dict().at("s1u1_bn2_moving_var"), rng, 2, 3);
  fill_uniform(net.plain->aux_dict().at("bn_last_moving_mean"), rng, -1, 1);
  check_same_outputs(*net.plain, *net.fused);
  // Only the convolution whose sources changed is prepared again (bn_last
  // follows an addition: it is not folded into a convolution).
  CHECK(net.fused->fused_stats().weight_preparations == prepared + 1);
}

TEST_CASE("a fused executor reshapes to another batch size") {
  TwoWays net(mixed_net(), Shape{2, 3, 12, 12}, 9);
  auto plain = net.plain->reshape({{"data", Shape{5, 3, 12, 12}}});
  auto fused = net.fused->reshape({{"data", Shape{5, 3, 12, 12}}});
  std::mt19937_64 rng(2);
  fill_uniform(plain->arg_dict().at("data"), rng, -1, 1);
  NDArray fused_data = fused->arg_dict().at("data");
  plain->arg_dict().at("data").copy_to(fused_data);
  CHECK(fused->fused_nodes() == net.fused->fused_nodes());
  check_same_outputs(*plain, *fused);
}

TEST_CASE("a fused executor refuses a training forward pass, and training binds never fuse") {
  TwoWays net(resnet_v2(), Shape{1, 3, 16, 16});
  if (net.fused->fused_nodes() > 0) {
    net.fused->forward(true);
    CHECK_THROWS_WITH_AS(Engine::get().wait_all(), doctest::Contains("bound for training"), Error);
  }
  BindOptions training;
  training.fuse_inference = true;  // ignored with for_training
  auto exe = Executor::simple_bind(resnet_v2(), {{"data", Shape{1, 3, 16, 16}}}, training);
  CHECK(exe->fused_nodes() == 0);
}

TEST_CASE("broadcast_add of one shape (ONNX's Add) is a residual addition; broadcasting is not") {
  if (!op::dnnl_enabled()) return;
  const Shape data{2, 3, 16, 16};
  const FusedOnce fused = fuse_once(resnet_v2("broadcast_add"), data);
  CHECK(fused.other_nodes == 2);  // Flatten and FullyConnected
  CHECK(fused.summary.convolutions == 12);
  CHECK(fused.summary.fused_additions == 3);
  TwoWays net(resnet_v2("broadcast_add"), data, 3);
  check_same_outputs(*net.plain, *net.fused);
  // A per-channel offset broadcast over the image ends the fused run.
  Symbol x = conv(var("data"), "c0", 16, 3, 1, 1);
  x = Symbol::create("broadcast_add", "offset", {}, {x, var("offset")});
  x = conv(x, "c1", 16, 3, 1, 1);
  BindOptions options;
  options.for_training = false;
  options.fuse_inference = true;
  auto exe = Executor::simple_bind(
      head(x, 3), {{"data", Shape{2, 3, 8, 8}}, {"offset", Shape{1, 16, 1, 1}}}, options);
  CHECK(exe->fused_nodes() == 2);
}

TEST_CASE("nothing is fused without a convolution, or with oneDNN switched off") {
  BindOptions options;
  options.for_training = false;
  options.fuse_inference = true;
  Symbol no_conv = head(act(bn(var("data"), "bn"), "relu"), 3);
  CHECK(Executor::simple_bind(no_conv, {{"data", Shape{2, 4, 5, 5}}}, options)->fused_nodes() == 0);
  op::ScopedDnnl off(false);
  CHECK(
      Executor::simple_bind(resnet_v2(), {{"data", Shape{1, 3, 16, 16}}}, options)->fused_nodes() ==
      0);
}

TEST_CASE("a network bound in float64 is not fused: the fused kernels are float32") {
  if (!op::dnnl_enabled()) {
    MESSAGE("oneDNN is off: nothing is fused either way");
    return;
  }
  const Symbol net = resnet_v2();
  IndexedGraph g(net.outputs());
  ShapeMap shapes;
  std::map<std::string, DType> float64;
  const auto inferred = net.infer_shape({{"data", Shape{1, 3, 16, 16}}});
  const auto args = net.list_arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    shapes[args[i]] = inferred.arguments[i];
    float64[args[i]] = DType::kFloat64;
  }
  const auto aux = net.list_auxiliary_states();
  for (size_t i = 0; i < aux.size(); ++i) {
    shapes[aux[i]] = inferred.aux[i];
    float64[aux[i]] = DType::kFloat64;
  }
  const EntryTypes in_float64 = infer_bound_entries(g, shapes, float64);
  CHECK(fuse_for_inference(g, in_float64.shapes, in_float64.dtypes).fused_nodes == 0);
  // The same shapes in float32: one fused node.
  const EntryTypes in_float32 = infer_bound_entries(g, shapes, {});
  CHECK(fuse_for_inference(g, in_float32.shapes, in_float32.dtypes).fused_nodes == 1);
}
