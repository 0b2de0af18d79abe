#include "graph/exec_plan.h"

#include <algorithm>

#include "base/error.h"
#include "op/registry.h"

namespace mx::graph {

GradReq parse_grad_req(const std::string& text) {
  if (text == "null") return GradReq::kNull;
  if (text == "write") return GradReq::kWrite;
  if (text == "add") return GradReq::kAdd;
  throw InputError("unknown grad_req '" + text + "' (expected write, add or null)");
}

namespace {

class PlanBuilder {
 public:
  PlanBuilder(const IndexedGraph& g, const PlanOptions& options) : g_(g), options_(options) {}

  int64_t add_entry(PlanEntry e) {
    plan.entries.push_back(std::move(e));
    return static_cast<int64_t>(plan.entries.size()) - 1;
  }

  int64_t internal_like(int64_t of, const std::string& suffix) {
    PlanEntry e = plan.entries[static_cast<size_t>(of)];
    e.name += suffix;
    e.role = EntryRole::kInternal;
    return add_entry(e);
  }

  GradReq req_of(uint32_t variable) const {
    if (g_.is_aux_variable(variable)) return GradReq::kNull;
    auto it = options_.grad_req.find(g_.node(variable).name);
    return it == options_.grad_req.end() ? options_.default_grad_req : it->second;
  }

  // The total gradient of forward entry `e` from its partial gradients.
  int64_t total_gradient(int64_t e, bool zero_if_none) {
    auto& parts = partials_[static_cast<size_t>(e)];
    if (parts.empty()) {
      if (!zero_if_none) return -1;
      int64_t z = internal_like(e, "_grad");
      plan.backward.push_back({StepKind::kZero, 0, {}, {}, {z}, {op::OpReq::kWrite}});
      return z;
    }
    if (parts.size() == 1) return parts[0];
    int64_t total = internal_like(e, "_grad");
    Step sum{StepKind::kSum,     0, parts, std::vector<bool>(parts.size(), true), {total},
             {op::OpReq::kWrite}};
    plan.backward.push_back(sum);
    return total;
  }

  ExecPlan plan;
  std::vector<std::vector<int64_t>> partials_;
  // Where each partial gradient was produced: (backward step, output slot).
  std::map<int64_t, std::pair<size_t, size_t>> producer_;

 private:
  const IndexedGraph& g_;
  const PlanOptions& options_;
};

}  // namespace

ExecPlan build_plan(const IndexedGraph& g, const std::vector<Shape>& shapes,
                    const std::vector<DType>& types, const PlanOptions& options) {
  PlanBuilder b(g, options);
  ExecPlan& plan = b.plan;
  plan.for_training = options.for_training;
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    for (uint32_t k = 0; k < n.num_outputs(); ++k) {
      PlanEntry e;
      e.name = n.output_name(k);
      e.shape = shapes[g.entry_id(id, k)];
      e.dtype = types[g.entry_id(id, k)];
      e.variable = id;
      e.role = !n.is_variable()        ? EntryRole::kInternal
               : g.is_aux_variable(id) ? EntryRole::kAux
                                       : EntryRole::kArgument;
      if (!e.shape.is_known())
        throw InputError("cannot bind: the shape of '" + e.name + "' is not known (" +
                         e.shape.to_string() + "); give the input shapes");
      b.add_entry(e);
    }
  }
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (n.is_variable()) continue;
    Step s;
    s.kind = StepKind::kForward;
    s.node = id;
    for (const auto& in : n.inputs) s.inputs.push_back(g.entry_id(in));
    s.reads.assign(s.inputs.size(), true);
    for (uint32_t k = 0; k < n.num_outputs(); ++k) {
      s.outputs.push_back(g.entry_id(id, k));
      s.req.push_back(op::OpReq::kWrite);
    }
    plan.forward.push_back(s);
  }
  for (const auto& h : g.heads()) plan.outputs.push_back(g.entry_id(h));
  if (!options.for_training) return plan;

  // Which nodes a gradient flows through: those that depend on an argument
  // whose gradient is requested (auxiliary inputs do not carry gradients).
  std::vector<bool> depends(g.num_nodes(), false);
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (n.is_variable()) {
      depends[id] = b.req_of(id) != GradReq::kNull;
      continue;
    }
    const size_t num_args = n.op->input_names().size();
    for (size_t k = 0; k < num_args; ++k)
      depends[id] = depends[id] || depends[g.node_id(n.inputs[k].node.get())];
  }

  b.partials_.assign(plan.entries.size(), {});
  for (size_t k = 0; k < g.heads().size(); ++k) {
    const NodeEntry& h = g.heads()[k];
    const bool loss = !h.node->is_variable() && h.node->op->def().is_loss;
    if (loss) {
      plan.head_grads.push_back(-1);
      continue;
    }
    PlanEntry e = plan.entries[static_cast<size_t>(plan.outputs[k])];
    e.name += "_head_grad";
    e.role = EntryRole::kHeadGrad;
    int64_t id = b.add_entry(e);
    plan.head_grads.push_back(id);
    b.partials_[static_cast<size_t>(plan.outputs[k])].push_back(id);
  }

  for (int64_t node = static_cast<int64_t>(g.num_nodes()) - 1; node >= 0; --node) {
    const uint32_t id = static_cast<uint32_t>(node);
    const Node& n = g.node(id);
    if (n.is_variable() || !depends[id] || !n.op->def().has_backward()) continue;
    const op::OpDef& def = n.op->def();
    const size_t num_args = n.op->input_names().size();
    Step s;
    s.kind = StepKind::kBackward;
    s.node = id;
    for (uint32_t k = 0; k < n.num_visible_outputs(); ++k) {
      int64_t grad = b.total_gradient(g.entry_id(id, k), !def.is_loss);
      s.inputs.push_back(grad);
      s.reads.push_back(grad >= 0);
    }
    for (size_t k = 0; k < num_args; ++k) {
      s.inputs.push_back(g.entry_id(n.inputs[k]));
      s.reads.push_back(def.backward_uses_inputs);
    }
    for (uint32_t k = 0; k < n.num_outputs(); ++k) {
      const auto& ignored = def.backward_ignores_outputs;
      s.inputs.push_back(g.entry_id(id, k));
      s.reads.push_back(def.backward_uses_outputs &&
                        std::find(ignored.begin(), ignored.end(), static_cast<int>(k)) == ignored.end());
    }
    for (size_t k = num_args; k < n.inputs.size(); ++k) {
      s.inputs.push_back(g.entry_id(n.inputs[k]));
      s.reads.push_back(true);
    }
    for (size_t k = 0; k < num_args; ++k) {
      const int64_t input_entry = g.entry_id(n.inputs[k]);
      if (!depends[g.node_id(n.inputs[k].node.get())]) {
        s.outputs.push_back(-1);
        s.req.push_back(op::OpReq::kNull);
        continue;
      }
      int64_t partial = b.internal_like(input_entry, str("_grad_from_", n.name));
      b.partials_.resize(plan.entries.size());
      b.partials_[static_cast<size_t>(input_entry)].push_back(partial);
      b.producer_[partial] = {plan.backward.size(), s.outputs.size()};
      s.outputs.push_back(partial);
      s.req.push_back(op::OpReq::kWrite);
    }
    plan.backward.push_back(s);
  }

  // Argument gradients go into the arrays the caller binds.
  b.partials_.resize(plan.entries.size());
  for (uint32_t v : g.variables()) {
    const GradReq req = b.req_of(v);
    if (req == GradReq::kNull) continue;
    const int64_t var_entry = g.entry_id(v, 0);
    PlanEntry e = plan.entries[static_cast<size_t>(var_entry)];
    e.name += "_grad";
    e.role = EntryRole::kArgGrad;
    const int64_t grad = b.add_entry(e);
    plan.argument_grads[v] = grad;
    const op::OpReq out_req = req == GradReq::kAdd ? op::OpReq::kAdd : op::OpReq::kWrite;
    auto& parts = b.partials_[static_cast<size_t>(var_entry)];
    if (parts.empty()) {
      // Nothing flows back (the argument does not reach an output): a zero gradient.
      if (req == GradReq::kWrite)
        plan.backward.push_back({StepKind::kZero, 0, {}, {}, {grad}, {out_req}});
    } else if (parts.size() == 1 && b.producer_.count(parts[0])) {
      // The single producer writes straight into the bound array.
      auto [step, slot] = b.producer_[parts[0]];
      plan.backward[step].outputs[slot] = grad;
      plan.backward[step].req[slot] = out_req;
    } else {
      plan.backward.push_back(
          {StepKind::kSum, 0, parts, std::vector<bool>(parts.size(), true), {grad}, {out_req}});
    }
  }
  return plan;
}

}  // namespace mx::graph
