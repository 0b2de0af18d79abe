// A graph with integer ids, for passes: nodes in topological order and
// every node output ("entry") numbered, as nnvm's IndexedGraph.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "graph/node.h"

namespace mx::graph {

class IndexedGraph {
 public:
  explicit IndexedGraph(const std::vector<NodeEntry>& heads);

  size_t num_nodes() const { return nodes_.size(); }
  uint32_t num_entries() const { return entry_start_.back(); }
  const Node& node(uint32_t id) const { return *nodes_[id]; }
  const std::shared_ptr<Node>& node_ptr(uint32_t id) const { return nodes_[id]; }
  uint32_t node_id(const Node* node) const { return ids_.at(node); }
  uint32_t entry_id(uint32_t node, uint32_t index) const { return entry_start_[node] + index; }
  uint32_t entry_id(const NodeEntry& e) const { return entry_id(node_id(e.node.get()), e.index); }
  // MXNet's node_row_ptr: entry ids of node i are [row_ptr[i], row_ptr[i+1]).
  const std::vector<uint32_t>& row_ptr() const { return entry_start_; }
  const std::vector<NodeEntry>& heads() const { return heads_; }
  // Variable nodes, in topological order.
  const std::vector<uint32_t>& variables() const { return variables_; }
  // True when the variable feeds an auxiliary-state input of some operator.
  bool is_aux_variable(uint32_t node) const { return aux_[node]; }

 private:
  std::vector<std::shared_ptr<Node>> nodes_;
  std::unordered_map<const Node*, uint32_t> ids_;
  std::vector<uint32_t> entry_start_;
  std::vector<NodeEntry> heads_;
  std::vector<uint32_t> variables_;
  std::vector<bool> aux_;
};

}  // namespace mx::graph
