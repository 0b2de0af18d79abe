#include "graph/node.h"

#include <unordered_set>

namespace mx::graph {

Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  for (auto& e : inputs) pending.push_back(std::move(e.node));
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    // The last owner takes the node's inputs before it dies, so its
    // destructor has nothing left to release recursively.
    if (node && node.use_count() == 1)
      for (auto& e : node->inputs) pending.push_back(std::move(e.node));
  }
}

uint32_t Node::num_outputs() const {
  return is_variable() ? 1 : static_cast<uint32_t>(op->output_names().size());
}

uint32_t Node::num_visible_outputs() const {
  return is_variable() ? 1 : static_cast<uint32_t>(op->num_visible_outputs());
}

std::string Node::output_name(uint32_t index) const {
  if (is_variable()) return name;
  return name + "_" + op->output_names()[index];
}

bool Node::input_is_aux(size_t input_index) const {
  if (is_variable()) return false;
  const size_t num_args = op->input_names().size();
  return input_index >= num_args;
}

std::string node_owner(const std::string& name, const std::string& op) {
  return "node '" + name + "' (" + op + ")";
}

bool is_hidden_attr(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 &&
         key.compare(key.size() - 2, 2, "__") == 0;
}

std::map<std::string, std::string> param_attrs(const std::map<std::string, std::string>& attrs) {
  std::map<std::string, std::string> params;
  for (const auto& [k, v] : attrs)
    if (!is_hidden_attr(k)) params[k] = v;
  return params;
}

std::vector<std::shared_ptr<Node>> topo_order(const std::vector<NodeEntry>& heads) {
  // Iterative post-order DFS (graphs can be thousands of nodes deep).
  std::vector<std::shared_ptr<Node>> order;
  std::unordered_set<const Node*> visited;
  struct Frame {
    std::shared_ptr<Node> node;
    size_t next_input;
  };
  std::vector<Frame> stack;
  for (const auto& head : heads) {
    if (!head.node || visited.count(head.node.get())) continue;
    visited.insert(head.node.get());
    stack.push_back({head.node, 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next_input < top.node->inputs.size()) {
        const auto& input = top.node->inputs[top.next_input++].node;
        if (!visited.count(input.get())) {
          visited.insert(input.get());
          stack.push_back({input, 0});
        }
      } else {
        order.push_back(top.node);
        stack.pop_back();
      }
    }
  }
  return order;
}

}  // namespace mx::graph
