#include "train/loss_scale_graph.h"

#include <map>
#include <memory>

namespace mx::train {
namespace {

using graph::NodeEntry;
using graph::Symbol;

// BlockGrad(x) + s * (x - BlockGrad(x)), named after `owner`.
NodeEntry scaled_gradient_path(const NodeEntry& x, const Symbol& scale, const std::string& owner) {
  const Symbol in(std::vector<NodeEntry>{{x.node, x.index, 0}});
  const Symbol blocked = Symbol::create("BlockGrad", owner + "_loss_scale_block", {}, {in});
  const Symbol zero = Symbol::create("elemwise_sub", owner + "_loss_scale_zero", {}, {in, blocked});
  const Symbol scaled =
      Symbol::create("broadcast_mul", owner + "_loss_scale_mul", {}, {zero, scale});
  return Symbol::create("elemwise_add", owner + "_loss_scale", {}, {blocked, scaled}).outputs()[0];
}

}  // namespace

Symbol scale_loss_gradient(const Symbol& network) {
  const Symbol scale = Symbol::variable(kLossScaleInput, {{"__shape__", "(1,)"}});
  std::map<const graph::Node*, std::shared_ptr<graph::Node>> copies;  // loss node -> its copy
  std::vector<NodeEntry> heads;
  for (const NodeEntry& h : network.outputs()) {
    const bool loss = !h.node->is_variable() && h.node->op->def().is_loss;
    if (!loss) {
      heads.push_back(scaled_gradient_path(h, scale, h.node->name));
      continue;
    }
    auto& copy = copies[h.node.get()];
    if (!copy) {
      copy = std::make_shared<graph::Node>(*h.node);
      copy->inputs[0] = scaled_gradient_path(copy->inputs[0], scale, h.node->name);
    }
    heads.push_back({copy, h.index, h.version});
  }
  return Symbol(std::move(heads));
}

}  // namespace mx::train
