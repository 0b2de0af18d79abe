#include "autograd/record.h"

#include "autograd/mode.h"
#include "base/error.h"
#include "base/strings.h"

namespace mx::autograd {
namespace {

// An input whose graph a backward pass freed is a constant from then on.
bool needs_gradient(const Array& a) { return a.entry && !a.entry.node->released; }

void check_same_array_kind(const NDArray& value, const NDArray& grad, size_t i) {
  if (grad.is_none()) throw InputError(str("variable ", i, ": no gradient array"));
  if (grad.shape() != value.shape() || grad.dtype() != value.dtype() || grad.ctx() != value.ctx())
    throw InputError(str("variable ", i, ": its gradient array is ", grad.describe(),
                         ", the variable is ", value.describe()));
}

std::vector<std::string> all_input_names(const op::OpInstance& op) {
  std::vector<std::string> names = op.input_names();
  for (const auto& a : op.aux_names()) names.push_back(a);
  return names;
}

// The visible outputs the caller gave, checked against what the operator
// makes; hidden outputs are allocated.
std::vector<NDArray> output_arrays(const op::OpInstance& op, const std::vector<Array>& given,
                                   const std::vector<op::OutputSpec>& specs, Context ctx) {
  const auto visible = static_cast<size_t>(op.num_visible_outputs());
  if (!given.empty() && given.size() != visible)
    throw InputError(str(op.owner(), ": ", given.size(), " output arrays given, but it has ",
                         visible, " output", visible == 1 ? "" : "s"));
  std::vector<NDArray> out;
  out.reserve(specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    if (k < given.size()) {
      const NDArray& a = given[k].value;
      if (a.shape() != specs[k].shape || a.dtype() != specs[k].dtype)
        throw InputError(str(op.owner(), ": output ", k, " is ", a.describe(), ", but the ",
                             "operator makes ", dtype_name(specs[k].dtype), " ",
                             specs[k].shape.to_string()));
      out.push_back(a);
    } else {
      out.emplace_back(specs[k].shape, ctx, specs[k].dtype);
    }
  }
  return out;
}

}  // namespace

void mark_variables(const std::vector<Array*>& variables, const std::vector<NDArray>& grads,
                    const std::vector<graph::GradReq>& reqs) {
  if (grads.size() != variables.size() || reqs.size() != variables.size())
    throw InputError(str(variables.size(), " variables, ", grads.size(), " gradient arrays and ",
                         reqs.size(), " requests: one of each per variable"));
  for (size_t i = 0; i < variables.size(); ++i) {
    if (variables[i]->value.is_none()) throw InputError(str("variable ", i, " is a none array"));
    if (reqs[i] != graph::GradReq::kNull) check_same_array_kind(variables[i]->value, grads[i], i);
  }
  for (size_t i = 0; i < variables.size(); ++i) {
    auto node = std::make_shared<TapeNode>();
    node->outputs = {variables[i]->value};
    node->grad = grads[i];
    node->grad_req = reqs[i];
    variables[i]->entry = {std::move(node), 0};
  }
}

std::vector<Array> invoke(const op::OpInstance& op, const std::vector<Array>& inputs,
                          const std::vector<Array>& outputs) {
  const size_t num_args = op.input_names().size();
  const size_t num_aux = op.aux_names().size();
  if (inputs.size() != num_args + num_aux)
    throw InputError(str(op.owner(), ": ", num_args + num_aux, " inputs expected (",
                         join(all_input_names(op), ", "), "), ", inputs.size(), " given"));
  std::vector<NDArray> args, aux;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].value.is_none()) throw InputError(str(op.owner(), ": input ", i, " is none"));
    (i < num_args ? args : aux).push_back(inputs[i].value);
  }
  const auto specs = op::infer_outputs(op, args, aux);
  const Context ctx = args.empty() ? Context::cpu() : args[0].ctx();
  std::vector<NDArray> all_outputs = output_arrays(op, outputs, specs, ctx);

  if (is_recording()) {
    for (size_t k = 0; k < outputs.size(); ++k)
      if (needs_gradient(outputs[k]))
        throw InputError(str(op.owner(), ": output ", k, " is on the autograd tape (a marked ",
                             "variable or a recorded result); writing it while recording would "
                             "change what the recorded graph read. Write a new array, or do "
                             "this outside recording"));
  }
  bool record = is_recording() && op.def().has_backward();
  if (record) {
    record = false;
    for (const auto& in : inputs) record = record || needs_gradient(in);
  }
  const bool train = is_training();
  op::invoke_forward(op, args, aux, all_outputs,
                     std::vector<op::OpReq>(all_outputs.size(), op::OpReq::kWrite), train);

  std::shared_ptr<TapeNode> node;
  if (record) {
    node = std::make_shared<TapeNode>();
    node->op = op;
    node->is_train = train;
    for (const auto& in : inputs) {
      node->inputs.push_back(needs_gradient(in) ? in.entry : TapeEntry{});
      node->input_values.push_back(in.value);
    }
    node->outputs = all_outputs;
  }
  // Unrecorded, a given output keeps its entry (a marked weight updated in
  // place stays marked).
  std::vector<Array> result;
  const auto visible = static_cast<size_t>(op.num_visible_outputs());
  for (size_t k = 0; k < visible; ++k) {
    TapeEntry entry = node ? TapeEntry{node, static_cast<uint32_t>(k)}
                           : (k < outputs.size() ? outputs[k].entry : TapeEntry{});
    result.emplace_back(all_outputs[k], std::move(entry));
  }
  return result;
}

}  // namespace mx::autograd
