#include "graph/plan_graph.h"

#include <optional>
#include <utility>

#include "graph/infer.h"

namespace mx::graph {

EntryTypes infer_bound_entries(const IndexedGraph& g, const ShapeMap& shapes,
                               const std::map<std::string, DType>& dtypes) {
  std::vector<Shape> entry_shapes(g.num_entries());
  std::vector<std::optional<DType>> entry_types(g.num_entries());
  for (uint32_t v : g.variables()) {
    const std::string& name = g.node(v).name;
    const uint32_t e = g.entry_id(v, 0);
    if (auto it = shapes.find(name); it != shapes.end()) entry_shapes[e] = it->second;
    if (auto it = dtypes.find(name); it != dtypes.end())
      entry_types[e] = it->second;
    else if (!g.is_aux_variable(v))
      entry_types[e] = DType::kFloat32;
  }
  entry_shapes = infer_entry_shapes(g, entry_shapes);
  entry_types = infer_entry_types(g, entry_types);
  std::vector<DType> types;
  for (const auto& t : entry_types) types.push_back(t.value_or(DType::kFloat32));
  return {std::move(entry_shapes), std::move(types)};
}

GraphPlan plan_graph(const IndexedGraph& g, const ShapeMap& shapes,
                     const std::map<std::string, DType>& dtypes, const GraphPlanOptions& options) {
  EntryTypes entries = infer_bound_entries(g, shapes, dtypes);
  GraphPlan out;
  out.plan = build_plan(g, entries.shapes, entries.dtypes, options.plan);
  // A recorded forward pass (autograd) keeps every value it made: nothing to mirror.
  if (options.plan.for_training && !options.plan.forward_recorded &&
      options.mirror != MirrorPolicy::kNone)
    out.recompute_steps = apply_mirroring(out.plan, g, mirror_nodes(g, options.mirror));
  out.memory = plan_memory(out.plan, g, options.memory);
  return out;
}

}  // namespace mx::graph
