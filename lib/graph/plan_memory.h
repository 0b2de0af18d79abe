// Memory planning (MXNet paper, section 3.1): every internal entry of an
// execution plan gets a storage block.
//  - in-place: an output takes its input's block when the operator allows it
//    and the input is read by no later step;
//  - co-share: a block whose entries are all dead is reused by a later entry
//    (a size-keyed free list; a slightly smaller block may grow).
// Arguments, auxiliary states and bound gradients are the caller's arrays
// and take no part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/exec_plan.h"

namespace mx::graph {

struct MemoryPlanOptions {
  bool inplace = true;
  bool coshare = true;
};

struct MemoryPlan {
  std::vector<int64_t> storage_of;  // per entry; -1 for the caller's arrays
  std::vector<size_t> block_bytes;  // per storage block
  // (step index in execution order, output slot) taking its input's block.
  std::vector<std::pair<size_t, size_t>> inplace_outputs;
  size_t total_bytes() const;
};

// Steps in execution order: forward, then backward.
std::vector<const Step*> execution_order(const ExecPlan& plan);

// Plans memory; sets req to kInplace where an output shares its input's block.
MemoryPlan plan_memory(ExecPlan& plan, const IndexedGraph& g, const MemoryPlanOptions& options);

// Mirroring ("Training Deep Nets with Sublinear Memory Cost"): the outputs of
// the chosen nodes are not kept for the backward pass but recomputed just
// before it needs them, so they die after their forward consumers.
enum class MirrorPolicy { kNone, kCheap, kAll };
// Nodes `policy` would mirror: kCheap keeps the outputs of operators marked
// expensive (OpDef::expensive: convolution, deconvolution, fully connected)
// and mirrors the rest; never
// nodes with auxiliary states or random numbers, or loss layers. A node
// with attribute "__mirror__" = "True"/"False" overrides the policy.
std::vector<bool> mirror_nodes(const IndexedGraph& g, MirrorPolicy policy);
// Rewrites the backward steps of `plan` to read recomputed copies of the
// mirrored nodes' outputs; returns the number of recompute steps added.
size_t apply_mirroring(ExecPlan& plan, const IndexedGraph& g, const std::vector<bool>& mirrored);

}  // namespace mx::graph
