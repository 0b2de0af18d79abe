#include "graph/amp_pass.h"

#include <map>
#include <set>
#include <utility>

#include "base/error.h"
#include "base/strings.h"
#include "op/registry.h"

namespace mx::graph {
namespace {

using EntryKey = std::pair<const Node*, uint32_t>;

// Walks the network once, copying each operator node with its inputs
// rewired and casts inserted; remembers which entries hold low-precision
// values and reuses a cast made for an entry (a weight shared by two layers
// is cast once).
class AmpRewriter {
 public:
  AmpRewriter(DType target, DeviceKind device) : target_(target), device_(device) {}

  NodeEntry rewrite(const NodeEntry& e) {
    auto node = copy_of(e.node);
    return {node, e.index, e.version};
  }
  // A head is float32 as the network's was.
  NodeEntry head(const NodeEntry& e) {
    NodeEntry copied = rewrite(e);
    return is_low(copied) ? cast(copied, DType::kFloat32) : copied;
  }

 private:
  std::shared_ptr<Node> copy_of(const std::shared_ptr<Node>& old) {
    if (old->is_variable()) return old;
    if (auto it = copies_.find(old.get()); it != copies_.end()) return it->second;
    auto node = std::make_shared<Node>(*old);
    for (auto& in : node->inputs) in = rewrite(in);
    convert(*node);
    copies_[old.get()] = node;
    return node;
  }

  bool is_low(const NodeEntry& e) const { return low_.count({e.node.get(), e.index}) > 0; }

  NodeEntry cast(const NodeEntry& e, DType to) {
    const EntryKey key{e.node.get(), e.index};
    auto& cached = (to == DType::kFloat32 ? to_float32_ : to_low_);
    if (auto it = cached.find(key); it != cached.end()) return it->second;
    auto node = std::make_shared<Node>();
    node->name = str(e.node->output_name(e.index), "_amp_cast_", dtype_name(to));
    node->attrs = {{"dtype", dtype_name(to)}};
    node->op.emplace("amp_cast", node->attrs, node->name);
    node->inputs = {e};
    NodeEntry out{node, 0, 0};
    if (to != DType::kFloat32) low_.insert({node.get(), 0});
    return cached[key] = out;
  }

  // The float inputs an operator's class concerns: not its auxiliary states.
  std::vector<size_t> data_inputs(const Node& n) const {
    std::vector<size_t> idx;
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.input_is_aux(i)) idx.push_back(i);
    return idx;
  }

  void mark_outputs_low(const Node& n) {
    for (uint32_t k = 0; k < n.num_outputs(); ++k) low_.insert({&n, k});
  }

  void convert(Node& n) {
    const op::OpDef& def = n.op->def();
    MX_CHECK(def.amp_class, "operator ", def.name, " declares no AMP class");
    const std::vector<size_t> ins = data_inputs(n);
    size_t low = 0;
    for (size_t i : ins) low += is_low(n.inputs[i]) ? 1 : 0;
    const op::AmpClass amp = device_ == DeviceKind::kCPU && def.amp_class_on_cpu
                                 ? *def.amp_class_on_cpu
                                 : def.amp_class(n.op->params());
    switch (amp) {
      case op::AmpClass::kLowPrecision:
        for (size_t i : ins)
          if (!is_low(n.inputs[i])) n.inputs[i] = cast(n.inputs[i], target_);
        mark_outputs_low(n);
        return;
      case op::AmpClass::kFollow:
        if (low == 0) return;
        if (low == ins.size()) return mark_outputs_low(n);
        [[fallthrough]];  // mixed inputs: float32, as the widest
      case op::AmpClass::kFloat32:
        for (size_t i : ins)
          if (is_low(n.inputs[i])) n.inputs[i] = cast(n.inputs[i], DType::kFloat32);
        return;
      case op::AmpClass::kFollowData:
        // The parameters stay float32 whatever the data's type.
        for (size_t i : ins)
          if (i != 0 && is_low(n.inputs[i])) n.inputs[i] = cast(n.inputs[i], DType::kFloat32);
        if (is_low(n.inputs[0])) low_.insert({&n, 0});
        return;
      case op::AmpClass::kWidest:
        if (low == 0) return;
        if (low == ins.size()) return mark_outputs_low(n);
        return multicast(n, ins);
      case op::AmpClass::kUnset: break;
    }
    throw Error(str("operator ", def.name, " declares no AMP class"));
  }

  // Mixed float32 and low-precision inputs of a widest-type operator: one
  // amp_multicast brings them all to float32.
  void multicast(Node& n, const std::vector<size_t>& ins) {
    auto node = std::make_shared<Node>();
    node->name = n.name + "_amp_multicast";
    node->attrs = {{"num_outputs", std::to_string(ins.size())}};
    node->op.emplace("amp_multicast", node->attrs, node->name);
    for (size_t i : ins) node->inputs.push_back(n.inputs[i]);
    for (size_t k = 0; k < ins.size(); ++k)
      n.inputs[ins[k]] = NodeEntry{node, static_cast<uint32_t>(k), 0};
  }

  DType target_;
  DeviceKind device_;
  std::map<const Node*, std::shared_ptr<Node>> copies_;
  std::map<EntryKey, NodeEntry> to_low_, to_float32_;
  std::set<EntryKey> low_;
};

}  // namespace

Symbol convert_to_mixed_precision(const Symbol& network, DType target, DeviceKind device) {
  if (target != DType::kBFloat16 && target != DType::kFloat16)
    throw InputError(str("mixed precision runs in bfloat16 or float16, not ", dtype_name(target)));
  AmpRewriter rewriter(target, device);
  // Nodes in topological order first, so that deep graphs do not recurse.
  for (const auto& node : topo_order(network.outputs()))
    if (!node->is_variable()) rewriter.rewrite(NodeEntry{node, 0, 0});
  std::vector<NodeEntry> heads;
  for (const auto& e : network.outputs()) heads.push_back(rewriter.head(e));
  return Symbol(std::move(heads));
}

}  // namespace mx::graph
