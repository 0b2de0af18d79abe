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

BackwardLayout BackwardLayout::of(const Node& n) {
  BackwardLayout layout;
  layout.out_grads = n.num_visible_outputs();
  layout.inputs = n.op->input_names().size();
  layout.outputs = n.num_outputs();
  layout.aux = n.inputs.size() - layout.inputs;
  return layout;
}

namespace {

// Builds an ExecPlan in passes: forward entries and steps, then (training)
// head gradients, one backward step per node a gradient flows through, and
// the bound argument gradients.
class PlanBuilder {
 public:
  PlanBuilder(const IndexedGraph& g, const PlanOptions& options) : g_(g), options_(options) {
    plan.for_training = options.for_training;
  }

  void add_forward(const std::vector<Shape>& shapes, const std::vector<DType>& types) {
    for (uint32_t id = 0; id < g_.num_nodes(); ++id) {
      const Node& n = g_.node(id);
      for (uint32_t k = 0; k < n.num_outputs(); ++k) {
        PlanEntry e;
        e.name = n.output_name(k);
        e.shape = shapes[g_.entry_id(id, k)];
        e.dtype = types[g_.entry_id(id, k)];
        e.variable = id;
        e.role = !n.is_variable()         ? operator_output_role()
                 : g_.is_aux_variable(id) ? EntryRole::kAux
                                          : EntryRole::kArgument;
        if (!e.shape.is_known())
          throw InputError("cannot bind: the shape of '" + e.name + "' is not known (" +
                           e.shape.to_string() + "); give the input shapes");
        add_entry(e);
      }
    }
    for (uint32_t id = 0; id < g_.num_nodes(); ++id) {
      const Node& n = g_.node(id);
      if (n.is_variable()) continue;
      Step s;
      s.kind = StepKind::kForward;
      s.node = id;
      for (const auto& in : n.inputs) s.inputs.push_back(g_.entry_id(in));
      s.reads.assign(s.inputs.size(), true);
      for (uint32_t k = 0; k < n.num_outputs(); ++k) {
        s.outputs.push_back(g_.entry_id(id, k));
        s.req.push_back(op::OpReq::kWrite);
      }
      plan.forward.push_back(s);
    }
    for (const auto& h : g_.heads()) plan.outputs.push_back(g_.entry_id(h));
  }

  void add_backward() {
    mark_gradient_flow();
    partials_.assign(plan.entries.size(), {});
    add_head_grads();
    for (int64_t node = static_cast<int64_t>(g_.num_nodes()) - 1; node >= 0; --node) {
      const uint32_t id = static_cast<uint32_t>(node);
      const Node& n = g_.node(id);
      if (!n.is_variable() && depends_[id] && n.op->def().has_backward()) add_backward_step(id);
    }
    bind_argument_grads();
  }

  ExecPlan plan;

 private:
  EntryRole operator_output_role() const {
    return options_.forward_recorded ? EntryRole::kRecorded : EntryRole::kInternal;
  }

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

  // Which nodes a gradient flows through: those that depend on an argument
  // whose gradient is requested (auxiliary inputs do not carry gradients).
  void mark_gradient_flow() {
    depends_.assign(g_.num_nodes(), false);
    for (uint32_t id = 0; id < g_.num_nodes(); ++id) {
      const Node& n = g_.node(id);
      if (n.is_variable()) {
        depends_[id] = req_of(id) != GradReq::kNull;
        continue;
      }
      if (n.op->def().stops_gradient) continue;  // its inputs' gradients are zero
      const size_t num_args = n.op->input_names().size();
      for (size_t k = 0; k < num_args; ++k)
        depends_[id] = depends_[id] || depends_[g_.node_id(n.inputs[k].node.get())];
    }
  }

  // Non-loss outputs get a head gradient the caller binds (ones by default).
  void add_head_grads() {
    for (size_t k = 0; k < g_.heads().size(); ++k) {
      const NodeEntry& h = g_.heads()[k];
      const bool loss = !h.node->is_variable() && h.node->op->def().is_loss;
      if (loss) {
        plan.head_grads.push_back(-1);
        continue;
      }
      PlanEntry e = plan.entries[static_cast<size_t>(plan.outputs[k])];
      e.name += "_head_grad";
      e.role = EntryRole::kHeadGrad;
      int64_t id = add_entry(e);
      plan.head_grads.push_back(id);
      partials_[static_cast<size_t>(plan.outputs[k])].push_back(id);
    }
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

  void add_backward_step(uint32_t id) {
    const Node& n = g_.node(id);
    const op::OpDef& def = n.op->def();
    Step s;
    s.kind = StepKind::kBackward;
    s.node = id;
    const BackwardLayout layout = BackwardLayout::of(n);
    s.inputs.assign(layout.size(), -1);
    s.reads.assign(layout.size(), false);
    auto set_input = [&s](size_t slot, int64_t entry, bool reads) {
      s.inputs[slot] = entry;
      s.reads[slot] = reads;
    };
    for (size_t k = 0; k < layout.out_grads; ++k) {
      const int64_t grad = total_gradient(g_.entry_id(id, static_cast<uint32_t>(k)), !def.is_loss);
      set_input(layout.out_grads_at() + k, grad, grad >= 0);
    }
    for (size_t k = 0; k < layout.inputs; ++k)
      set_input(layout.inputs_at() + k, g_.entry_id(n.inputs[k]), def.backward_uses_inputs);
    const auto& ignored = def.backward_ignores_outputs;
    for (size_t k = 0; k < layout.outputs; ++k)
      set_input(layout.outputs_at() + k, g_.entry_id(id, static_cast<uint32_t>(k)),
                def.backward_uses_outputs && std::find(ignored.begin(), ignored.end(),
                                                       static_cast<int>(k)) == ignored.end());
    for (size_t k = 0; k < layout.aux; ++k)
      set_input(layout.aux_at() + k, g_.entry_id(n.inputs[layout.inputs + k]), true);
    // One partial gradient per argument a gradient flows to.
    const size_t step = plan.backward.size();
    for (size_t k = 0; k < layout.inputs; ++k) {
      const int64_t input_entry = g_.entry_id(n.inputs[k]);
      if (!depends_[g_.node_id(n.inputs[k].node.get())]) {
        s.outputs.push_back(-1);
        s.req.push_back(op::OpReq::kNull);
        continue;
      }
      partials_.resize(plan.entries.size());
      auto& parts = partials_[static_cast<size_t>(input_entry)];
      // A gradient into an entry that an earlier backward step already
      // wrote is added onto that array (MXNet's addto): no array per
      // partial gradient and no sum. (Not within one step, whose kernel
      // would get one array as two of its outputs.)
      if (parts.size() == 1 && producers_.count(parts[0]) &&
          producers_[parts[0]].back().first != step) {
        producers_[parts[0]].push_back({step, s.outputs.size()});
        s.outputs.push_back(parts[0]);
        s.req.push_back(op::OpReq::kAdd);
        continue;
      }
      int64_t partial = internal_like(input_entry, str("_grad_from_", n.name));
      partials_.resize(plan.entries.size());
      partials_[static_cast<size_t>(input_entry)].push_back(partial);
      producers_[partial] = {{step, s.outputs.size()}};
      s.outputs.push_back(partial);
      s.req.push_back(op::OpReq::kWrite);
    }
    plan.backward.push_back(s);
  }

  // Argument gradients go into the arrays the caller binds.
  void bind_argument_grads() {
    partials_.resize(plan.entries.size());
    for (uint32_t v : g_.variables()) {
      const GradReq req = req_of(v);
      if (req == GradReq::kNull) continue;
      const int64_t var_entry = g_.entry_id(v, 0);
      PlanEntry e = plan.entries[static_cast<size_t>(var_entry)];
      e.name += "_grad";
      e.role = EntryRole::kArgGrad;
      const int64_t grad = add_entry(e);
      plan.argument_grads[v] = grad;
      const op::OpReq out_req = req == GradReq::kAdd ? op::OpReq::kAdd : op::OpReq::kWrite;
      auto& parts = partials_[static_cast<size_t>(var_entry)];
      if (parts.empty()) {
        // Nothing flows back (the argument does not reach an output): a zero gradient.
        if (req == GradReq::kWrite)
          plan.backward.push_back({StepKind::kZero, 0, {}, {}, {grad}, {out_req}});
      } else if (parts.size() == 1 && producers_.count(parts[0])) {
        // Its producers write straight into the bound array: the first as
        // grad_req asks, the others add.
        const auto& writers = producers_[parts[0]];
        for (size_t w = 0; w < writers.size(); ++w) {
          auto [step, slot] = writers[w];
          plan.backward[step].outputs[slot] = grad;
          plan.backward[step].req[slot] = w == 0 ? out_req : op::OpReq::kAdd;
        }
      } else {
        plan.backward.push_back(
            {StepKind::kSum, 0, parts, std::vector<bool>(parts.size(), true), {grad}, {out_req}});
      }
    }
  }

  const IndexedGraph& g_;
  const PlanOptions& options_;
  std::vector<bool> depends_;                   // per node: a gradient flows through it
  std::vector<std::vector<int64_t>> partials_;  // per entry: its partial gradients
  // Which backward steps write each partial gradient, (step, output slot):
  // the first writes it, the others add onto it.
  std::map<int64_t, std::vector<std::pair<size_t, size_t>>> producers_;
};

}  // namespace

ExecPlan build_plan(const IndexedGraph& g, const std::vector<Shape>& shapes,
                    const std::vector<DType>& types, const PlanOptions& options) {
  if (options.forward_recorded && !options.for_training)
    throw Error("build_plan: a recorded forward pass is bound for its backward pass only");
  PlanBuilder b(g, options);
  b.add_forward(shapes, types);
  if (options.for_training) b.add_backward();
  // The recorded forward pass already ran: nothing of it is run again.
  if (options.forward_recorded) b.plan.forward.clear();
  return std::move(b.plan);
}

}  // namespace mx::graph
