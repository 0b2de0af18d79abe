#include "autograd/backward.h"

#include <map>
#include <utility>

#include "base/error.h"
#include "base/strings.h"
#include "executor/executor.h"

namespace mx::autograd {
namespace {

// The tape reachable from the heads as a graph::Symbol and the arrays to
// bind it with (backward.h, step 1).
class GraphBuilder {
 public:
  // `wanted`: the variables gradients() returns; null for backward(), which
  // writes every marked variable's own buffer.
  explicit GraphBuilder(const std::map<const TapeNode*, NDArray>* wanted) : wanted_(wanted) {}

  // Adds `root` and every node it depends on, inputs first. Iterative, so
  // that a long recorded chain cannot overflow the stack.
  void add(const std::shared_ptr<TapeNode>& root) {
    std::vector<std::pair<std::shared_ptr<TapeNode>, bool>> stack{{root, false}};
    while (!stack.empty()) {
      auto [t, inputs_done] = stack.back();
      stack.pop_back();
      if (made_.count(t.get())) continue;
      if (t->is_variable()) {
        made_[t.get()] = make_variable(*t);
        continue;
      }
      if (t->released)
        throw InputError(str("the graph recorded for ", t->op->def().name,
                             " was freed by an "
                             "earlier backward pass; pass retain_graph to that pass to run "
                             "backward through it again"));
      if (inputs_done) {
        made_[t.get()] = make_call(t);
        continue;
      }
      stack.push_back({t, true});
      for (const auto& in : t->inputs)
        if (in && !made_.count(in.node.get())) stack.push_back({in.node, false});
    }
  }

  graph::NodeEntry entry_of(const TapeEntry& e) const {
    return {made_.at(e.node.get()), e.index, 0};
  }

  std::map<std::string, NDArray> args, grads, aux;
  std::map<std::string, graph::GradReq> grad_req;
  RecordedForward recorded;
  std::vector<std::shared_ptr<TapeNode>> calls;

 private:
  std::shared_ptr<graph::Node> variable_node(const std::string& prefix) {
    auto node = std::make_shared<graph::Node>();
    node->name = str(prefix, next_id_++);
    return node;
  }

  std::shared_ptr<graph::Node> make_variable(const TapeNode& t) {
    auto node = variable_node("var");
    args[node->name] = t.outputs[0];
    if (wanted_) {
      if (auto it = wanted_->find(&t); it != wanted_->end()) {
        grads[node->name] = it->second;
        grad_req[node->name] = graph::GradReq::kWrite;
      }
    } else if (t.grad_req != graph::GradReq::kNull) {
      grads[node->name] = t.grad;
      grad_req[node->name] = t.grad_req;
    }
    return node;
  }

  std::shared_ptr<graph::Node> make_call(const std::shared_ptr<TapeNode>& t) {
    auto node = std::make_shared<graph::Node>();
    node->name = str(to_lower(t->op->def().name), next_id_++);
    node->op = *t->op;
    node->attrs = t->op->attrs();
    const size_t num_args = t->op->input_names().size();
    for (size_t i = 0; i < t->inputs.size(); ++i) {
      if (i >= num_args) {  // auxiliary states carry no gradient
        auto v = variable_node("aux");
        aux[v->name] = t->input_values[i];
        node->inputs.push_back({v, 0, 1});
      } else if (t->inputs[i]) {
        node->inputs.push_back(entry_of(t->inputs[i]));
      } else {  // an array on no tape: an argument without gradient
        auto v = variable_node("const");
        args[v->name] = t->input_values[i];
        node->inputs.push_back({v, 0, 0});
      }
    }
    recorded.nodes[node.get()] = {t->outputs, t->is_train};
    calls.push_back(t);
    return node;
  }

  const std::map<const TapeNode*, NDArray>* wanted_;
  std::map<const TapeNode*, std::shared_ptr<graph::Node>> made_;
  int next_id_ = 0;
};

void run_backward(const std::vector<Array>& heads, const BackwardOptions& options,
                  const std::map<const TapeNode*, NDArray>* wanted) {
  if (heads.empty()) throw InputError("no heads to differentiate");
  if (!options.head_grads.empty() && options.head_grads.size() != heads.size())
    throw InputError(str(options.head_grads.size(), " head gradients for ", heads.size(),
                         " heads: give one per head, or none for ones"));
  GraphBuilder b(wanted);
  std::vector<graph::NodeEntry> outputs;
  for (size_t i = 0; i < heads.size(); ++i) {
    if (!heads[i].entry)
      throw InputError(str("head ", i, " is neither the result of a recorded operator call nor a ",
                           "marked variable: record the calls that make it (with recording ",
                           "on) from marked variables"));
    b.add(heads[i].entry.node);
    outputs.push_back(b.entry_of(heads[i].entry));
  }
  BindOptions bind;
  bind.ctx = heads[0].value.ctx();
  bind.grad_req = b.grad_req;
  auto exe = Executor::bind_recorded(graph::Symbol(outputs), b.args, b.grads, b.aux,
                                     std::move(b.recorded), bind);
  // The engine operations keep what they use; the executor can go now.
  exe->backward(options.head_grads);
  if (!options.retain_graph)
    for (const auto& call : b.calls) call->release();
}

}  // namespace

void backward(const std::vector<Array>& heads, const BackwardOptions& options) {
  run_backward(heads, options, nullptr);
}

std::vector<NDArray> gradients(const std::vector<Array>& heads, const std::vector<Array>& variables,
                               const BackwardOptions& options) {
  std::map<const TapeNode*, NDArray> wanted;
  std::vector<NDArray> out;
  for (size_t i = 0; i < variables.size(); ++i) {
    const Array& v = variables[i];
    if (!v.entry || !v.entry.node->is_variable())
      throw InputError(str("variable ", i, " is not a marked variable; gradients are taken with ",
                           "respect to marked variables only"));
    auto [it, added] = wanted.emplace(v.entry.node.get(), NDArray());
    // Zeros: a variable the heads do not depend on has a zero gradient.
    if (added) it->second = NDArray::zeros(v.value.shape(), v.value.ctx(), v.value.dtype());
    out.push_back(it->second);
  }
  run_backward(heads, options, &wanted);
  return out;
}

}  // namespace mx::autograd
