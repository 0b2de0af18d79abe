// FusionPlan (op/fusion_plan.h): which layers of a fused inference graph run
// as one primitive, and in whose turn. Only the layers' kinds and the values
// they read matter here, so the graphs below have no parameters.
#include <doctest/doctest.h>

#include "op/fusion_plan.h"

using namespace mx;
using namespace mx::op;

namespace {

// A graph of one input (value 0); add() returns the new layer's value.
struct Graph {
  FusedGraphDesc desc;
  Graph() { desc.inputs = {Shape{1, 8, 4, 4}}; }
  int add(LayerKind kind, std::vector<int> inputs, ActType activation = ActType::kRelu) {
    InferenceLayer layer;
    layer.kind = kind;
    layer.activation = activation;
    desc.layers.push_back({layer, std::move(inputs), "layer"});
    return desc.value_of_layer(desc.layers.size() - 1);
  }
  int layer_of(int value) const { return value - static_cast<int>(desc.inputs.size()); }
};

}  // namespace

TEST_CASE("a convolution takes the BatchNorm, the activation and the addition after it") {
  Graph g;
  const int conv = g.add(LayerKind::kConvolution, {0});
  const int bn = g.add(LayerKind::kBatchNorm, {conv});
  const int relu = g.add(LayerKind::kActivation, {bn});
  const int next = g.add(LayerKind::kConvolution, {relu});
  g.desc.outputs = {next};
  FusionPlan plan(g.desc);
  const LayerFusion& f = plan.of(g.layer_of(conv));
  CHECK(f.fold_batch_norm == g.layer_of(bn));
  CHECK(f.post_ops == std::vector<int>{g.layer_of(relu)});
  CHECK(f.last == g.layer_of(relu));
  CHECK(plan.of(g.layer_of(bn)).absorbed);
  CHECK(plan.of(g.layer_of(relu)).absorbed);
  CHECK(plan.turn_of(g.layer_of(bn)) == g.layer_of(relu));
  CHECK_FALSE(plan.of(g.layer_of(next)).absorbed);
}

TEST_CASE(
    "two convolutions feeding one addition: the first takes it, the other's value is the addend") {
  // A ResNet v1 projection block: conv-BN on both sides, added, then ReLU.
  Graph g;
  const int a = g.add(LayerKind::kConvolution, {0});
  const int bn_a = g.add(LayerKind::kBatchNorm, {a});
  const int b = g.add(LayerKind::kConvolution, {0});
  const int bn_b = g.add(LayerKind::kBatchNorm, {b});
  const int sum = g.add(LayerKind::kAdd, {bn_a, bn_b});
  const int relu = g.add(LayerKind::kActivation, {sum});
  g.desc.outputs = {relu};
  FusionPlan plan(g.desc);
  const LayerFusion& first = plan.of(g.layer_of(a));
  CHECK(first.post_ops == std::vector<int>{g.layer_of(sum), g.layer_of(relu)});
  CHECK(first.addend == bn_b);
  CHECK(first.last == g.layer_of(relu));
  const LayerFusion& second = plan.of(g.layer_of(b));
  CHECK(second.fold_batch_norm == g.layer_of(bn_b));
  CHECK(second.post_ops.empty());
  // The addend is made before the turn that adds it, and dies there.
  CHECK(second.last < first.last);
  CHECK(plan.dies_at(bn_b, first.last));
  CHECK_FALSE(plan.dies_at(bn_b, second.last));
}

TEST_CASE("a value handed back or read twice stays whole") {
  Graph g;
  const int conv = g.add(LayerKind::kConvolution, {0});
  const int relu = g.add(LayerKind::kActivation, {conv});
  const int conv2 = g.add(LayerKind::kConvolution, {relu});
  const int left = g.add(LayerKind::kActivation, {conv2});
  const int right = g.add(LayerKind::kPooling, {conv2});
  g.desc.outputs = {conv, left, right};
  FusionPlan plan(g.desc);
  CHECK(plan.of(g.layer_of(conv)).post_ops.empty());   // conv is an output
  CHECK(plan.of(g.layer_of(conv2)).post_ops.empty());  // conv2 has two readers
  CHECK_FALSE(plan.of(g.layer_of(relu)).absorbed);
  // conv2's value is read in the turns of `left` and `right`.
  CHECK_FALSE(plan.dies_at(conv2, g.layer_of(left)));
  CHECK(plan.dies_at(conv2, g.layer_of(right)));
  CHECK_FALSE(plan.dies_at(0, g.layer_of(right)));  // graph inputs are the caller's
}

TEST_CASE("BatchNorm takes a ReLU but no other activation; one activation per convolution") {
  Graph g;
  const int bn = g.add(LayerKind::kBatchNorm, {0});
  const int relu = g.add(LayerKind::kActivation, {bn});
  const int bn2 = g.add(LayerKind::kBatchNorm, {relu});
  const int sig = g.add(LayerKind::kActivation, {bn2}, ActType::kSigmoid);
  const int conv = g.add(LayerKind::kConvolution, {sig});
  const int tanh1 = g.add(LayerKind::kActivation, {conv}, ActType::kTanh);
  const int tanh2 = g.add(LayerKind::kActivation, {tanh1}, ActType::kTanh);
  g.desc.outputs = {tanh2};
  FusionPlan plan(g.desc);
  CHECK(plan.of(g.layer_of(bn)).post_ops == std::vector<int>{g.layer_of(relu)});
  CHECK(plan.of(g.layer_of(bn2)).post_ops.empty());
  CHECK(plan.of(g.layer_of(conv)).post_ops == std::vector<int>{g.layer_of(tanh1)});
  CHECK_FALSE(plan.of(g.layer_of(tanh2)).absorbed);
  // A BatchNorm after an activation is not folded into the convolution before it.
  CHECK(plan.of(g.layer_of(conv)).fold_batch_norm == -1);
}
