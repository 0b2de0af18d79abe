// The steps an executor runs: the forward pass of every needed node, and for
// training the backward pass built from each operator's gradient rule
// (MXNet paper, section 3.1). Gradients flowing into one entry from several
// consumers are summed; grad_req is write, add or null per argument; nodes
// whose inputs need no gradient get no backward step.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/indexed_graph.h"

namespace mx::graph {

enum class GradReq { kNull, kWrite, kAdd };
// Parses "null", "write", "add" (MXNet's spelling); throws InputError otherwise.
GradReq parse_grad_req(const std::string& text);

// What an entry of the plan holds. Arguments, auxiliary states, head
// gradients, argument gradients and recorded forward values are arrays the
// caller binds; the others live in memory the planner assigns.
//   kRecorded: an operator's output computed before the bind, by autograd's
//              recorded imperative calls (PlanOptions::forward_recorded)
enum class EntryRole { kArgument, kAux, kHeadGrad, kArgGrad, kInternal, kRecorded };

struct PlanEntry {
  std::string name;  // "fc1_output", "fc1_output_grad", "data", ...
  Shape shape;
  DType dtype = DType::kFloat32;
  EntryRole role = EntryRole::kInternal;
  uint32_t variable = 0;  // for arguments, aux and argument gradients: the variable node
  size_t bytes() const { return static_cast<size_t>(shape.size()) * dtype_size(dtype); }
};

enum class StepKind {
  kForward,    // the node's forward kernel
  kBackward,   // the node's backward kernel
  kSum,        // outputs[0] = sum of inputs (gradient aggregation)
  kZero,       // outputs[0] = 0 (gradient of an output nobody uses)
  kRecompute,  // the node's forward again, for mirroring (outputs are copies)
};

// Where the parts of a kBackward step's inputs lie in Step::inputs (and
// Step::reads): the gradients of the node's visible outputs, its forward
// inputs (arguments), all its forward outputs, its auxiliary states. The plan
// builder writes and the executor reads a backward step through this layout
// alone; the gradient of output 0 is slot 0 (in-place backward relies on it).
struct BackwardLayout {
  size_t out_grads = 0, inputs = 0, outputs = 0, aux = 0;  // how many of each

  static BackwardLayout of(const Node& n);
  size_t out_grads_at() const { return 0; }
  size_t inputs_at() const { return out_grads_at() + out_grads; }
  size_t outputs_at() const { return inputs_at() + inputs; }
  size_t aux_at() const { return outputs_at() + outputs; }
  size_t size() const { return aux_at() + aux; }
};

// Entry id -1: absent (a gradient nobody needs).
struct Step {
  StepKind kind = StepKind::kForward;
  uint32_t node = 0;
  // kForward/kRecompute: node inputs (arguments, then auxiliary states).
  // kBackward: as BackwardLayout places them.
  std::vector<int64_t> inputs;
  // Whether the step reads each input's values (else only its shape).
  std::vector<bool> reads;
  std::vector<int64_t> outputs;
  std::vector<op::OpReq> req;  // per output
};

struct ExecPlan {
  std::vector<PlanEntry> entries;  // forward entries first, ids as in the IndexedGraph
  std::vector<Step> forward, backward;
  std::vector<int64_t> outputs;                // the symbol's outputs
  std::vector<int64_t> head_grads;             // per output; -1 for loss outputs
  std::map<uint32_t, int64_t> argument_grads;  // variable node -> its gradient entry
  bool for_training = false;
};

struct PlanOptions {
  bool for_training = false;
  // Per argument name; arguments not listed get `default_grad_req`.
  std::map<std::string, GradReq> grad_req;
  GradReq default_grad_req = GradReq::kWrite;
  // The forward pass already ran (autograd): the operators' outputs are
  // arrays the caller binds (kRecorded), the plan has no forward steps, and
  // the backward steps read those arrays. Needs for_training.
  bool forward_recorded = false;
};

// Builds the plan for `g` with every entry's shape and dtype known.
ExecPlan build_plan(const IndexedGraph& g, const std::vector<Shape>& entry_shapes,
                    const std::vector<DType>& entry_types, const PlanOptions& options);

}  // namespace mx::graph
