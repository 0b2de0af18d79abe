#include "train/recurrent_layer.h"

#include "base/error.h"
#include "base/strings.h"
#include "op/nn/rnn_param.h"
#include "train/carried_states.h"

namespace mx::train {
namespace {

std::string take(std::map<std::string, std::string>& attrs, const std::string& key,
                 const std::string& fallback) {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  std::string value = trim(it->second);
  attrs.erase(it);
  return value;
}

graph::Symbol to_other_layout(const std::string& name, const graph::Symbol& x) {
  return graph::Symbol::create("transpose", name, {{"axes", "(1, 0, 2)"}}, {x});
}

}  // namespace

RecurrentLayer build_recurrent_layer(const std::string& name,
                                     std::map<std::string, std::string> attrs,
                                     const graph::Symbol& data, const std::string& where) {
  const std::string layout = take(attrs, "layout", "TNC");
  const std::string begin = take(attrs, "begin_state", "zeros");
  if (layout != "TNC" && layout != "NTC")
    throw InputError(where + ": layout must be TNC (steps first) or NTC (batch first), not '" +
                     layout + "'");
  if (begin != "zeros" && begin != "carry")
    throw InputError(where + ": begin_state must be zeros or carry, not '" + begin + "'");
  if (attrs.count("use_sequence_length") && begin == "carry")
    throw InputError(where +
                     ": begin_state: carry continues every sequence into the next batch; "
                     "it does not combine with use_sequence_length");
  const bool carry = begin == "carry";
  if (carry) attrs["state_outputs"] = "True";
  const op::RnnParam p = op::RnnParam::from_strings(attrs, where);

  // The states' shapes, (layers * directions, batch, width): the batch (0)
  // follows from the data when the graph is bound.
  const std::string states = std::to_string(p.num_layers * p.directions());
  std::map<std::string, graph::Symbol> named;
  std::vector<std::pair<std::string, int64_t>> state_inputs{{"state", p.state_width()}};
  if (p.lstm()) state_inputs.push_back({"state_cell", p.state_size});
  std::vector<std::string> carried_names;
  for (const auto& [input, width] : state_inputs) {
    const std::string suffix = input == "state" ? "" : "_cell";
    if (carry) {
      const std::string head = name + (input == "state" ? "_state" : "_statecell") + "_carry";
      named[input] =
          graph::Symbol::variable(name + "_begin_state" + suffix, {{kCarryAttr, head + "_output"}});
      carried_names.push_back(head);
    } else {
      named[input] = graph::Symbol::create(
          "_zeros", name + "_begin_state" + suffix,
          {{"shape", "(" + states + ", 0, " + std::to_string(width) + ")"}}, {});
    }
  }
  const graph::Symbol input = layout == "NTC" ? to_other_layout(name + "_tnc", data) : data;
  RecurrentLayer layer;
  layer.rnn = graph::Symbol::create("RNN", name, attrs, {input}, named);
  layer.output = layout == "NTC" ? to_other_layout(name + "_ntc", layer.rnn[0]) : layer.rnn[0];
  for (size_t k = 0; k < carried_names.size(); ++k)
    layer.carried.push_back(
        graph::Symbol::create("BlockGrad", carried_names[k], {}, {layer.rnn[k + 1]}));
  return layer;
}

}  // namespace mx::train
