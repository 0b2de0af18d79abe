#include "graph/fuse_inference.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "graph/quantize_marks.h"
#include "op/fused_inference_op.h"

namespace mx::graph {
namespace {

// A run of fusable nodes (ids in topological order) and what they become.
struct Region {
  std::vector<uint32_t> nodes;
  std::vector<op::InferenceLayer> layers;
  // Worth a fused graph: a convolution, or a FullyConnected marked int8.
  bool worth_fusing = false;
};

class Fuser {
 public:
  Fuser(const IndexedGraph& g, const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
        bool bfloat16)
      : g_(g), shapes_(shapes), dtypes_(dtypes), bfloat16_(bfloat16), uses_(g.num_entries(), 0) {
    for (uint32_t n = 0; n < g.num_nodes(); ++n)
      for (const NodeEntry& e : g.node(n).inputs) ++uses_[g.entry_id(e)];
    for (const NodeEntry& e : g.heads()) ++uses_[g.entry_id(e)];
  }

  InferenceFusion run() {
    find_regions();
    InferenceFusion out;
    region_of_.assign(g_.num_nodes(), -1);
    for (size_t r = 0; r < regions_.size(); ++r)
      for (uint32_t n : regions_[r].nodes) region_of_[n] = static_cast<int>(r);
    built_.assign(regions_.size(), false);
    for (uint32_t n = 0; n < g_.num_nodes(); ++n) {
      const Node& node = g_.node(n);
      if (node.is_variable()) continue;
      const int r = region_of_[n];
      if (r >= 0) {
        if (!built_[static_cast<size_t>(r)]) {
          built_[static_cast<size_t>(r)] = true;
          if (build_fused(regions_[static_cast<size_t>(r)])) {
            ++out.fused_nodes;
            out.fused_layers += static_cast<int>(regions_[static_cast<size_t>(r)].nodes.size());
            continue;
          }
          // oneDNN could not build it: its nodes are copied one by one.
          for (uint32_t m : regions_[static_cast<size_t>(r)].nodes) region_of_[m] = -1;
        } else {
          continue;
        }
      }
      copy_node(n);
    }
    for (const NodeEntry& e : g_.heads()) out.heads.push_back(mapped(e));
    return out;
  }

 private:
  // The layer node n is, when it can join a fused graph.
  std::optional<op::InferenceLayer> layer_of(uint32_t n) const {
    const Node& node = g_.node(n);
    const op::OpDef& def = node.op->def();
    if (!def.inference_layer) return std::nullopt;
    op::ShapeVector in, out;
    for (const NodeEntry& e : node.inputs) {
      const uint32_t id = g_.entry_id(e);
      if (dtypes_[id] != DType::kFloat32 || !shapes_[id].is_known()) return std::nullopt;
      in.push_back(shapes_[id]);
    }
    for (uint32_t k = 0; k < node.num_outputs(); ++k) {
      const uint32_t id = g_.entry_id(n, k);
      if (dtypes_[id] != DType::kFloat32 || !shapes_[id].is_known()) return std::nullopt;
      // Only the first output lives on in a fused graph (BatchNorm's saved
      // statistics are not made).
      if (k > 0 && uses_[id] > 0) return std::nullopt;
      out.push_back(shapes_[id]);
    }
    auto layer = def.inference_layer(node.op->params(), in, out);
    if (!layer || !op::can_fuse_for_inference(*layer)) return std::nullopt;
    // Parameters (weights, BatchNorm's statistics) come straight from variables.
    const bool parameters_are_variables =
        layer->kind == op::LayerKind::kAdd ||
        std::all_of(node.inputs.begin() + 1, node.inputs.end(),
                    [](const NodeEntry& e) { return e.node->is_variable(); });
    if (!parameters_are_variables) return std::nullopt;
    return layer;
  }

  // Runs of fusable operator nodes, consecutive in topological order
  // (variables between them do not break a run). A run is contiguous, so no
  // path leaves it and comes back: replacing it by one node keeps the graph
  // acyclic.
  void find_regions() {
    Region current;
    auto close = [&] {
      if (current.worth_fusing) regions_.push_back(std::move(current));
      current = Region{};
    };
    for (uint32_t n = 0; n < g_.num_nodes(); ++n) {
      if (g_.node(n).is_variable()) continue;
      auto layer = layer_of(n);
      if (!layer) {
        close();
        continue;
      }
      current.nodes.push_back(n);
      current.worth_fusing |=
          layer->kind == op::LayerKind::kConvolution ||
          (layer->kind == op::LayerKind::kFullyConnected && marked_int8(g_.node(n)));
      current.layers.push_back(*layer);
    }
    close();
  }

  bool build_fused(const Region& region) {
    std::map<uint32_t, int> value_of_entry;  // entry id -> value of the fused graph
    std::map<uint32_t, size_t> position;     // node id -> layer index
    for (size_t i = 0; i < region.nodes.size(); ++i) position[region.nodes[i]] = i;
    // Inputs: entries made outside the region, auxiliary states last.
    std::vector<NodeEntry> regular, aux;
    std::map<uint32_t, bool> input_is_aux;
    std::vector<uint32_t> input_order;
    for (uint32_t n : region.nodes) {
      const Node& node = g_.node(n);
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        const NodeEntry& e = node.inputs[i];
        if (position.count(g_.node_id(e.node.get()))) continue;
        const uint32_t id = g_.entry_id(e);
        auto [it, added] = input_is_aux.emplace(id, node.input_is_aux(i));
        if (added)
          (node.input_is_aux(i) ? aux : regular).push_back(e);
        else if (it->second != node.input_is_aux(i))
          return false;  // read as a state and as an input: left alone
      }
    }
    op::FusedGraphDesc desc;
    desc.num_aux = aux.size();
    desc.bfloat16 = bfloat16_;
    std::vector<NodeEntry> inputs = regular;
    inputs.insert(inputs.end(), aux.begin(), aux.end());
    for (const NodeEntry& e : inputs) {
      value_of_entry[g_.entry_id(e)] = static_cast<int>(desc.inputs.size());
      desc.inputs.push_back(shapes_[g_.entry_id(e)]);
    }
    for (size_t i = 0; i < region.nodes.size(); ++i) {
      const Node& node = g_.node(region.nodes[i]);
      op::FusedLayer layer{region.layers[i], {}, node.name};
      for (const NodeEntry& e : node.inputs)
        layer.inputs.push_back(value_of_entry.at(g_.entry_id(e)));
      layer.int8 = (layer.layer.kind == op::LayerKind::kConvolution ||
                    layer.layer.kind == op::LayerKind::kFullyConnected) &&
                   marked_int8(node);
      value_of_entry[g_.entry_id(region.nodes[i], 0)] = desc.value_of_layer(i);
      desc.layers.push_back(std::move(layer));
    }
    add_calibrated_ranges(desc, inputs, region);
    // Outputs: first outputs read outside the region or returned by the graph.
    std::map<uint32_t, int> uses_inside;
    for (uint32_t n : region.nodes)
      for (const NodeEntry& e : g_.node(n).inputs) ++uses_inside[g_.entry_id(e)];
    std::vector<uint32_t> output_entries;
    for (uint32_t n : region.nodes) {
      const uint32_t id = g_.entry_id(n, 0);
      if (uses_[id] > uses_inside[id]) {
        output_entries.push_back(id);
        desc.outputs.push_back(value_of_entry.at(id));
        desc.output_shapes.push_back(shapes_[id]);
      }
    }
    const Node& first = g_.node(region.nodes.front());
    auto fused = op::fused_inference_op(desc, first.name + "_fused");
    if (!fused) return false;
    auto node = std::make_shared<Node>();
    node->name = first.name + "_fused";
    node->op = std::move(*fused);
    for (const NodeEntry& e : inputs) node->inputs.push_back(mapped(e));
    for (size_t k = 0; k < output_entries.size(); ++k)
      entries_[output_entries[k]] = NodeEntry{node, static_cast<uint32_t>(k), 0};
    return true;
  }

  // The calibrated ranges of the values, when the region has an int8 layer.
  void add_calibrated_ranges(op::FusedGraphDesc& desc, const std::vector<NodeEntry>& inputs,
                             const Region& region) const {
    if (std::none_of(desc.layers.begin(), desc.layers.end(),
                     [](const op::FusedLayer& l) { return l.int8; }))
      return;
    for (const NodeEntry& e : inputs)
      desc.ranges.push_back(e.index == 0 ? calibrated_range(*e.node) : std::nullopt);
    for (uint32_t n : region.nodes) desc.ranges.push_back(calibrated_range(g_.node(n)));
  }

  void copy_node(uint32_t n) {
    auto node = std::make_shared<Node>(g_.node(n));
    for (NodeEntry& e : node->inputs) e = mapped(e);
    for (uint32_t k = 0; k < node->num_outputs(); ++k)
      entries_[g_.entry_id(n, k)] = NodeEntry{node, k, 0};
  }

  // An entry of the original graph in the rewritten one (variables are shared).
  NodeEntry mapped(const NodeEntry& e) const {
    if (e.node->is_variable()) return e;
    NodeEntry out = entries_.at(g_.entry_id(e));
    out.version = e.version;
    return out;
  }

  const IndexedGraph& g_;
  const std::vector<Shape>& shapes_;
  const std::vector<DType>& dtypes_;
  bool bfloat16_;
  std::vector<int> uses_;
  std::vector<Region> regions_;
  std::vector<int> region_of_;
  std::vector<bool> built_;
  std::map<uint32_t, NodeEntry> entries_;
};

}  // namespace

InferenceFusion fuse_for_inference(const IndexedGraph& g, const std::vector<Shape>& shapes,
                                   const std::vector<DType>& dtypes, bool bfloat16) {
  return Fuser(g, shapes, dtypes, bfloat16).run();
}

}  // namespace mx::graph
