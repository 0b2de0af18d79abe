// Shape and type inference over a whole graph: each operator fills what it
// can from what is known, forward and backward, until nothing changes.
// Conflicts name the node, its operator and both shapes.
#pragma once

#include <optional>
#include <vector>

#include "graph/indexed_graph.h"

namespace mx::graph {

// `entry_shapes` has one shape per entry (IndexedGraph::num_entries), seeded
// with what is known (variables' shapes); returns them with everything that
// could be inferred. Variables' "__shape__" attributes are used too.
std::vector<Shape> infer_entry_shapes(const IndexedGraph& g, std::vector<Shape> entry_shapes);
std::vector<std::optional<DType>> infer_entry_types(const IndexedGraph& g,
                                                    std::vector<std::optional<DType>> entry_types);

}  // namespace mx::graph
