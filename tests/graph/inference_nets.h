// The networks and the two-executor harness of the inference fusion tests
// (test_inference_fusion.cc, test_int8_inference.cc): small ResNet v1 and
// v2 networks and a network of every other case a fused graph takes, bound
// layer by layer and fused on the same arrays.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "executor/executor.h"
#include "graph/quantize_marks.h"
#include "graph/symbol.h"

namespace mx::test_nets {

using graph::Symbol;
using Attrs = std::map<std::string, std::string>;

inline Symbol var(const std::string& name) { return Symbol::variable(name); }

inline Symbol conv(const Symbol& x, const std::string& name, int filters, int kernel,
                   int stride = 1, int pad = 0, bool bias = false, int groups = 1) {
  auto pair = [](int v) { return "(" + std::to_string(v) + ", " + std::to_string(v) + ")"; };
  return Symbol::create("Convolution", name,
                        {{"num_filter", std::to_string(filters)},
                         {"kernel", pair(kernel)},
                         {"stride", pair(stride)},
                         {"pad", pair(pad)},
                         {"no_bias", bias ? "False" : "True"},
                         {"num_group", std::to_string(groups)}},
                        {x});
}
inline Symbol bn(const Symbol& x, const std::string& name, bool fix_gamma = false) {
  return Symbol::create("BatchNorm", name,
                        {{"fix_gamma", fix_gamma ? "True" : "False"}, {"eps", "1e-5"}}, {x});
}
inline Symbol act(const Symbol& x, const std::string& name, const char* type = "relu") {
  return Symbol::create("Activation", name, {{"act_type", type}}, {x});
}
inline Symbol add(const Symbol& a, const Symbol& b, const std::string& name,
                  const char* op = "elemwise_add") {
  return Symbol::create(op, name, {}, {a, b});
}
inline Symbol pool(const Symbol& x, const std::string& name, Attrs attrs) {
  return Symbol::create("Pooling", name, attrs, {x});
}
inline Symbol head(const Symbol& x, int classes) {
  Symbol flat = Symbol::create("Flatten", "flatten", {}, {x});
  return Symbol::create("FullyConnected", "fc", {{"num_hidden", std::to_string(classes)}}, {flat});
}

// A pre-activation (v2) bottleneck unit, as Gluon's resnet50_v2 builds it.
// `add_op`: the residual addition's operator (ONNX's Add imports as broadcast_add).
inline Symbol unit_v2(const Symbol& x, const std::string& name, int channels, int stride,
                      bool project, const char* add_op) {
  Symbol pre = act(bn(x, name + "_bn1"), name + "_relu1");
  Symbol h = conv(pre, name + "_conv1", channels / 4, 1);
  h = act(bn(h, name + "_bn2"), name + "_relu2");
  h = conv(h, name + "_conv2", channels / 4, 3, stride, 1);
  h = act(bn(h, name + "_bn3"), name + "_relu3");
  h = conv(h, name + "_conv3", channels, 1);
  Symbol shortcut = project ? conv(pre, name + "_down", channels, 1, stride) : x;
  return add(h, shortcut, name + "_add", add_op);
}

inline Symbol resnet_v2(const char* add_op = "elemwise_add") {
  Symbol x = bn(var("data"), "bn_data", true);
  x = conv(x, "conv0", 16, 3, 1, 1);
  x = act(bn(x, "bn0"), "relu0");
  x = pool(x, "pool0", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}});
  x = unit_v2(x, "s1u1", 32, 1, true, add_op);
  x = unit_v2(x, "s1u2", 32, 1, false, add_op);
  x = unit_v2(x, "s2u1", 64, 2, true, add_op);
  x = act(bn(x, "bn_last"), "relu_last");
  x = pool(x, "pool1", {{"global_pool", "True"}, {"pool_type", "avg"}, {"kernel", "(1, 1)"}});
  return head(x, 10);
}

// A post-activation (v1) basic block: the addition comes after the second
// BatchNorm, the ReLU after the addition.
inline Symbol unit_v1(const Symbol& x, const std::string& name, int channels, int stride) {
  Symbol h =
      act(bn(conv(x, name + "_conv1", channels, 3, stride, 1), name + "_bn1"), name + "_relu1");
  h = bn(conv(h, name + "_conv2", channels, 3, 1, 1), name + "_bn2");
  Symbol shortcut =
      stride == 1 ? x : bn(conv(x, name + "_down", channels, 1, stride), name + "_bn_down");
  return act(add(h, shortcut, name + "_add"), name + "_relu2");
}

// Every other case the fused graph takes: a bias, groups, tanh and sigmoid,
// average pooling with the 'full' convention and without the padding, a
// convolution with no BatchNorm after it, an addition of two graph values.
inline Symbol mixed_net() {
  Symbol x = conv(var("data"), "c0", 8, 3, 1, 1, true);
  x = act(x, "t0", "tanh");
  x = unit_v1(x, "u1", 16, 2);
  x = unit_v1(x, "u2", 16, 1);
  Symbol g = conv(x, "grouped", 16, 3, 1, 1, true, 4);
  g = act(bn(g, "bn_g"), "sig", "sigmoid");
  x = add(g, x, "join");
  x = pool(x, "avg_full",
           {{"kernel", "(3, 3)"},
            {"stride", "(2, 2)"},
            {"pool_type", "avg"},
            {"pooling_convention", "full"},
            {"count_include_pad", "False"}});
  return head(x, 5);
}

inline void fill_uniform(NDArray a, std::mt19937_64& rng, double low, double high) {
  std::uniform_real_distribution<float> u(static_cast<float>(low), static_cast<float>(high));
  std::vector<float> v(static_cast<size_t>(a.size()));
  for (auto& x : v) x = u(rng);
  NDArray::from_vector<float>(a.shape(), v).copy_to(a);
}

// One network bound twice on the same arrays: layer by layer, and fused.
struct TwoWays {
  std::unique_ptr<Executor> plain, fused;

  TwoWays(const Symbol& net, const Shape& data, uint64_t seed = 1, bool bfloat16 = false) {
    BindOptions options;
    options.for_training = false;
    plain = Executor::simple_bind(net, {{"data", data}}, options);
    std::mt19937_64 rng(seed);
    for (const auto& [name, a] : plain->arg_dict()) fill_uniform(a, rng, -0.5, 0.5);
    for (const auto& [name, a] : plain->aux_dict())
      fill_uniform(a, rng, name.find("var") != std::string::npos ? 0.5 : -0.2, 1.5);
    options.fuse_inference = true;
    options.bfloat16_inference = bfloat16;
    fused = std::make_unique<Executor>(net, plain->arg_dict(), std::map<std::string, NDArray>{},
                                       plain->aux_dict(), options);
  }
};

// The worst difference of fused's outputs from plain's, relative to each value.
inline double check_same_outputs(Executor& plain, Executor& fused, double tolerance = 1e-3) {
  plain.forward(false);
  fused.forward(false);
  REQUIRE(plain.outputs().size() == fused.outputs().size());
  double worst = 0;
  for (size_t k = 0; k < plain.outputs().size(); ++k) {
    const auto want = plain.outputs()[k].to_vector<float>();
    const auto got = fused.outputs()[k].to_vector<float>();
    REQUIRE(want.size() == got.size());
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(double(want[i]) - got[i]) / (1e-3 + std::abs(want[i])));
    INFO("output ", k, ": worst relative difference ", worst);
    CHECK(worst < tolerance);
  }
  return worst;
}

// Marks every convolution and FullyConnected of `net` int8 and gives the
// data and every operator's first output the range it has for `args` (the
// data included) and `aux`, as mx-quantize's naive calibration does.
inline void mark_int8(const Symbol& net, const std::map<std::string, NDArray>& args,
                      const std::map<std::string, NDArray>& aux) {
  std::vector<graph::NodeEntry> entries;
  for (const auto& node : graph::topo_order(net.outputs()))
    if (!node->is_variable() || node->name == "data") entries.push_back({node, 0, 0});
  Symbol internals(entries);
  std::map<std::string, NDArray> used_args, used_aux;
  for (const auto& name : internals.list_arguments()) used_args[name] = args.at(name);
  for (const auto& name : internals.list_auxiliary_states()) used_aux[name] = aux.at(name);
  BindOptions options;
  options.for_training = false;
  Executor values(internals, used_args, {}, used_aux, options);
  values.forward(false);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto v = values.outputs()[i].to_vector<float>();
    const auto [low, high] = std::minmax_element(v.begin(), v.end());
    graph::set_calibrated_range(*entries[i].node, op::ValueRange{*low, *high});
    if (!entries[i].node->is_variable() && graph::can_run_int8(entries[i].node->op->def().name))
      entries[i].node->attrs[graph::kQuantizeAttr] = "int8";
  }
}

}  // namespace mx::test_nets
