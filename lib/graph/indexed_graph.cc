#include "graph/indexed_graph.h"

namespace mx::graph {

IndexedGraph::IndexedGraph(const std::vector<NodeEntry>& heads)
    : nodes_(topo_order(heads)), heads_(heads) {
  entry_start_.reserve(nodes_.size() + 1);
  entry_start_.push_back(0);
  aux_.assign(nodes_.size(), false);
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    ids_[nodes_[i].get()] = i;
    entry_start_.push_back(entry_start_.back() + nodes_[i]->num_outputs());
    if (nodes_[i]->is_variable()) variables_.push_back(i);
  }
  for (const auto& n : nodes_)
    for (size_t k = 0; k < n->inputs.size(); ++k)
      if (n->input_is_aux(k)) aux_[ids_.at(n->inputs[k].node.get())] = true;
}

}  // namespace mx::graph
