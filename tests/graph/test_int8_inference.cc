// int8 inside the fused inference graphs (graph/quantize_marks.h,
// op/dnnl/dnnl_inference_graph.h): networks whose convolutions are marked
// int8, with every value's range calibrated on the input they are run on,
// must give the float32 outputs within int8's rounding, keep the values
// between int8 layers in int8, and refuse marks without ranges.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "graph/quantize_marks.h"
#include "inference_nets.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/fused_inference_op.h"

using namespace mx;
using namespace mx::graph;
using namespace mx::test_nets;

namespace {

// The network bound layer by layer in float32 and fused with int8 marks.
struct Int8Ways {
  std::unique_ptr<Executor> plain, fused;
  op::FusedGraphStats stats;

  Int8Ways(const Symbol& net, const Shape& data, uint64_t seed) {
    BindOptions options;
    options.for_training = false;
    plain = Executor::simple_bind(net, {{"data", data}}, options);
    std::mt19937_64 rng(seed);
    for (const auto& [name, a] : plain->arg_dict())
      fill_uniform(a, rng, name == "data" ? -1.0 : -0.5, name == "data" ? 1.0 : 0.5);
    for (const auto& [name, a] : plain->aux_dict())
      fill_uniform(a, rng, name.find("var") != std::string::npos ? 0.5 : -0.2, 1.5);
    mark_int8(net, plain->arg_dict(), plain->aux_dict());
    options.fuse_inference = true;
    fused = std::make_unique<Executor>(net, plain->arg_dict(), std::map<std::string, NDArray>{},
                                       plain->aux_dict(), options);
    stats = fused->fused_stats();
  }
};

// ||int8 - float32|| / ||float32|| of every output.
double relative_error(Executor& plain, Executor& fused) {
  plain.forward(false);
  fused.forward(false);
  double worst = 0;
  for (size_t k = 0; k < plain.outputs().size(); ++k) {
    const auto want = plain.outputs()[k].to_vector<float>();
    const auto got = fused.outputs()[k].to_vector<float>();
    double diff = 0, ref = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
      ref += double(want[i]) * want[i];
    }
    worst = std::max(worst, std::sqrt(diff / ref));
  }
  return worst;
}

}  // namespace

// A LeNet: a convolution region, then after the Flatten a region of two
// FullyConnected layers with a ReLU between them.
Symbol lenet() {
  Symbol x = pool(act(conv(var("data"), "c0", 8, 5, 1, 0, true), "r0"), "p0",
                  {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}});
  x = Symbol::create("Flatten", "flatten", {}, {x});
  x = act(Symbol::create("FullyConnected", "fc1", {{"num_hidden", "32"}}, {x}), "r1");
  return Symbol::create("FullyConnected", "fc2", {{"num_hidden", "10"}}, {x});
}

TEST_CASE("int8 convolutions and FullyConnected layers stay within int8's rounding of float32") {
  if (!op::dnnl_enabled()) {
    MESSAGE("skipped: no oneDNN");
    return;
  }
  struct Case {
    const char* name;
    Symbol net;
    Shape data;
    int fused_nodes, convolutions, fully_connected;
  };
  Symbol biased = conv(var("data"), "c0", 16, 3, 1, 1, /*bias=*/true);
  Symbol single = head(act(biased, "r0"), 4);
  for (const auto& c :
       // (head(): Flatten and a FullyConnected, a fused graph of its own.)
       {Case{"one convolution with a bias", single, Shape{2, 3, 10, 10}, 2, 1, 1},
        Case{"ResNet v2", resnet_v2(), Shape{2, 3, 16, 16}, 2, 12, 1},
        Case{"ResNet v1 blocks, groups, tanh, sigmoid", mixed_net(), Shape{3, 3, 12, 12}, 2, 7, 1},
        Case{"LeNet", lenet(), Shape{4, 1, 16, 16}, 2, 1, 2}}) {
    INFO(std::string(c.name));
    Int8Ways both(c.net, c.data, 11);
    REQUIRE(both.fused->fused_nodes() == c.fused_nodes);
    CHECK(both.stats.int8_convolutions == c.convolutions);
    CHECK(both.stats.int8_fully_connected == c.fully_connected);
    const double error = relative_error(*both.plain, *both.fused);
    MESSAGE(std::string(c.name), ": int8 against float32, relative error ", error);
    // 8 bits per value and per weight: a fraction of a percent per layer.
    CHECK(error < 0.03);
    CHECK(error > 1e-5);  // it really ran in int8
  }
}

TEST_CASE("values between int8 layers stay int8: no more reorders than float32") {
  if (!op::dnnl_enabled()) return;
  Int8Ways both(resnet_v2(), Shape{2, 3, 16, 16}, 3);
  // The image quantized on the way in, the pooled features out, the
  // pre-activation units' BatchNorm inputs dequantized; the FullyConnected
  // head's features quantized on the way in, its outputs out.
  MESSAGE("reorders: ", both.stats.reorders);
  CHECK(both.stats.reorders <= 10);
}

TEST_CASE(
    "an int8 mark without calibrated ranges, or a bad one, is refused with the layer's name") {
  Symbol net = head(act(conv(var("data"), "c0", 8, 3), "r0"), 2);
  auto nodes = topo_order(net.outputs());
  Node* c0 = nullptr;
  for (const auto& n : nodes)
    if (n->name == "c0") c0 = n.get();
  REQUIRE(c0 != nullptr);
  c0->attrs[kQuantizeAttr] = "int8";
  CHECK_THROWS_WITH_AS(check_quantization_marks(net, "m.json"),
                       doctest::Contains("m.json: layer 'c0' is marked int8 but its input 'data'"),
                       InputError);
  c0->attrs[kQuantizeAttr] = "int4";
  CHECK_THROWS_WITH_AS(check_quantization_marks(net, "m.json"), doctest::Contains("'int4'"),
                       InputError);
  c0->attrs.erase(kQuantizeAttr);
  c0->attrs[kMinCalibAttr] = "1";
  c0->attrs[kMaxCalibAttr] = "-1";
  CHECK_THROWS_WITH_AS(check_quantization_marks(net, "m.json"), doctest::Contains("inverted"),
                       InputError);
  c0->attrs[kMaxCalibAttr] = "abc";
  CHECK_THROWS_WITH_AS(check_quantization_marks(net, "m.json"),
                       doctest::Contains("not a finite number"), InputError);
}

TEST_CASE("int8 marks survive the symbol's JSON and stay hidden from the operator") {
  Symbol net = conv(var("data"), "c0", 8, 3);
  auto nodes = topo_order(net.outputs());
  for (const auto& n : nodes) {
    set_calibrated_range(*n, op::ValueRange{-1.5f, 2.25f});
    if (!n->is_variable()) n->attrs[kQuantizeAttr] = "int8";
  }
  Symbol back = Symbol::from_json(net.to_json());
  CHECK(check_quantization_marks(back, "j") == 1);
  for (const auto& n : topo_order(back.outputs())) {
    auto r = calibrated_range(*n);
    REQUIRE(r);
    CHECK(r->min == -1.5f);
    CHECK(r->max == 2.25f);
  }
}
