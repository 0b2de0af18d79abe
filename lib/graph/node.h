// The nodes of a computation graph (nnvm's representation, which MXNet's
// symbol JSON serializes): a node is a variable or an operator applied to
// entries (outputs) of other nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "op/invoke.h"

namespace mx::graph {

struct Node;

// One output of a node. `version` is nnvm's variable version: 1 where an
// operator mutates the input (auxiliary states), else 0.
struct NodeEntry {
  std::shared_ptr<Node> node;
  uint32_t index = 0;
  uint32_t version = 0;

  bool operator==(const NodeEntry& o) const { return node == o.node && index == o.index; }
};

struct Node {
  std::string name;
  // Empty for a variable.
  std::optional<op::OpInstance> op;
  // Every attribute as MXNet stores it: the operator's parameters as given
  // (not defaults) and extra ones such as __shape__, __lr_mult__, __init__.
  std::map<std::string, std::string> attrs;
  std::vector<NodeEntry> inputs;
  // The output count a loaded JSON file declared in node_row_ptr, when it
  // differs from the operator's (MXNet builds with MKL-DNN give max pooling
  // a workspace output); written back so files round-trip unchanged.
  std::optional<uint32_t> declared_outputs;

  Node() = default;
  Node(const Node&) = default;
  Node& operator=(const Node&) = default;
  // Releases a long chain of inputs in a loop, not by recursion, so that a
  // deep network (or a long symbol file) cannot overflow the stack.
  ~Node();

  bool is_variable() const { return !op.has_value(); }
  // All outputs, hidden ones (BatchNorm's saved statistics, Dropout's mask) included.
  uint32_t num_outputs() const;
  uint32_t num_visible_outputs() const;
  // "fc1_output", "sl_output1", or the variable's name.
  std::string output_name(uint32_t index) const;
  // Indices of the inputs that are auxiliary states (the last aux_names().size()).
  bool input_is_aux(size_t input_index) const;
};

// How a node is named in messages: "node 'fc1' (FullyConnected)".
std::string node_owner(const std::string& name, const std::string& op);

// Attributes that are not operator parameters: MXNet spells them __name__.
bool is_hidden_attr(const std::string& key);
// The operator parameters among `attrs`.
std::map<std::string, std::string> param_attrs(const std::map<std::string, std::string>& attrs);

// Nodes reachable from `heads`, inputs before the nodes that use them, each
// once, in the order of nnvm's DFSVisit (the order MXNet lists arguments in).
std::vector<std::shared_ptr<Node>> topo_order(const std::vector<NodeEntry>& heads);

}  // namespace mx::graph
