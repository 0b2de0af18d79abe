// From a graph and its input shapes to what an executor runs: shape and type
// inference, the forward/backward steps (build_plan), mirroring for
// training, and the memory plan. Binding an executor and the memory report
// without a bind (Executor::plan_only) both go through this one sequence.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "graph/exec_plan.h"
#include "graph/plan_memory.h"
#include "graph/symbol.h"

namespace mx::graph {

struct GraphPlanOptions {
  PlanOptions plan;
  MirrorPolicy mirror = MirrorPolicy::kNone;  // applies when plan.for_training
  MemoryPlanOptions memory;
};

struct GraphPlan {
  ExecPlan plan;
  MemoryPlan memory;
  size_t recompute_steps = 0;  // forward steps mirroring added
};

// Every entry's shape and dtype from `shapes` and `dtypes` by variable
// name; variables without a dtype (other than auxiliary states, which infer
// theirs) are float32.
struct EntryTypes {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};
EntryTypes infer_bound_entries(const IndexedGraph& g, const ShapeMap& shapes,
                               const std::map<std::string, DType>& dtypes);

// `shapes` and `dtypes` as for infer_bound_entries.
GraphPlan plan_graph(const IndexedGraph& g, const ShapeMap& shapes,
                     const std::map<std::string, DType>& dtypes, const GraphPlanOptions& options);

}  // namespace mx::graph
