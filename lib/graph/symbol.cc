#include "graph/symbol.h"

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "graph/indexed_graph.h"
#include "op/registry.h"

namespace mx::graph {
Symbol Symbol::variable(const std::string& name, const std::map<std::string, std::string>& attrs) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->attrs = attrs;
  return Symbol({NodeEntry{node, 0, 0}});
}

Symbol Symbol::create(const std::string& op_name, const std::string& name,
                      const std::map<std::string, std::string>& attrs,
                      const std::vector<Symbol>& inputs,
                      const std::map<std::string, Symbol>& named_inputs) {
  auto node = std::make_shared<Node>();
  node->name = name;
  node->attrs = attrs;
  const std::string op_def_name = op::OpRegistry::get().find(op_name).name;
  node->op.emplace(op_def_name, param_attrs(attrs), node_owner(name, op_def_name));
  std::vector<std::string> arg_names = node->op->input_names();
  std::vector<std::string> aux_names = node->op->aux_names();
  std::vector<std::string> all = arg_names;
  all.insert(all.end(), aux_names.begin(), aux_names.end());
  if (inputs.size() > all.size())
    throw InputError(str(node->op->owner(), ": ", inputs.size(), " inputs given, but it takes ",
                         all.size(), " (", join(all, ", "), ")"));
  for (const auto& [key, symbol] : named_inputs) {
    bool known = false;
    for (const auto& n : all) known = known || n == key;
    if (!known)
      throw InputError(node->op->owner() + ": no input named '" + key + "'" +
                       did_you_mean(key, all) + "; inputs are: " + join(all, ", "));
  }
  for (size_t i = 0; i < all.size(); ++i) {
    const Symbol* given = nullptr;
    if (i < inputs.size()) given = &inputs[i];
    auto it = named_inputs.find(all[i]);
    if (it != named_inputs.end()) {
      if (given) throw InputError(node->op->owner() + ": input '" + all[i] + "' given twice");
      given = &it->second;
    }
    const uint32_t version = i >= arg_names.size() ? 1 : 0;  // auxiliary states are mutated
    if (given) {
      if (given->num_outputs() != 1)
        throw InputError(str(node->op->owner(), ": input '", all[i], "' has ", given->num_outputs(),
                             " outputs; pick one with [i]"));
      NodeEntry e = given->outputs_[0];
      e.version = version;
      node->inputs.push_back(e);
    } else {
      Symbol v = variable(name + "_" + all[i]);
      NodeEntry e = v.outputs_[0];
      e.version = version;
      node->inputs.push_back(e);
    }
  }
  std::vector<NodeEntry> outs;
  for (uint32_t k = 0; k < node->num_visible_outputs(); ++k) outs.push_back({node, k, 0});
  return Symbol(outs);
}

Symbol Symbol::group(const std::vector<Symbol>& symbols) {
  std::vector<NodeEntry> outs;
  for (const auto& s : symbols) outs.insert(outs.end(), s.outputs_.begin(), s.outputs_.end());
  return Symbol(outs);
}

Symbol Symbol::operator[](size_t index) const {
  if (index >= outputs_.size())
    throw InputError(str("output index ", index, " out of range: the symbol has ", outputs_.size(),
                         " output(s)"));
  return Symbol({outputs_[index]});
}

Symbol Symbol::operator[](const std::string& output_name) const {
  std::vector<std::string> names = list_outputs();
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == output_name) return (*this)[i];
  throw InputError("no output named '" + output_name + "'" + did_you_mean(output_name, names));
}

std::vector<std::string> Symbol::list_arguments() const {
  IndexedGraph g(outputs_);
  std::vector<std::string> names;
  for (uint32_t v : g.variables())
    if (!g.is_aux_variable(v)) names.push_back(g.node(v).name);
  return names;
}

std::vector<std::string> Symbol::list_auxiliary_states() const {
  IndexedGraph g(outputs_);
  std::vector<std::string> names;
  for (uint32_t v : g.variables())
    if (g.is_aux_variable(v)) names.push_back(g.node(v).name);
  return names;
}

std::vector<std::string> Symbol::list_outputs() const {
  std::vector<std::string> names;
  for (const auto& e : outputs_) names.push_back(e.node->output_name(e.index));
  return names;
}

Symbol Symbol::get_internals() const {
  std::vector<NodeEntry> outs;
  for (const auto& node : topo_order(outputs_))
    for (uint32_t k = 0; k < node->num_visible_outputs(); ++k) outs.push_back({node, k, 0});
  return Symbol(outs);
}

std::optional<std::string> Symbol::attr(const std::string& key) const {
  if (outputs_.size() != 1) throw InputError("attr() needs a symbol with one output");
  auto it = outputs_[0].node->attrs.find(key);
  if (it == outputs_[0].node->attrs.end()) return std::nullopt;
  return it->second;
}

void Symbol::set_attr(const std::string& key, const std::string& value) {
  if (outputs_.size() != 1) throw InputError("set_attr() needs a symbol with one output");
  Node& node = *outputs_[0].node;
  if (!node.is_variable() && !is_hidden_attr(key)) {
    // Re-parse, so the parameters stay valid; made before it replaces the
    // old instance, so a bad value leaves the node as it was.
    auto attrs = node.attrs;
    attrs[key] = value;
    op::OpInstance reparsed(node.op->def().name, param_attrs(attrs), node.op->owner());
    node.op = std::move(reparsed);
  }
  node.attrs[key] = value;
}

std::string Symbol::name() const {
  if (outputs_.size() != 1) throw InputError("name() needs a symbol with one output");
  return outputs_[0].node->name;
}

void Symbol::save(const std::string& path) const {
  const std::string text = to_json();
  write_file_atomically(path, [&](std::ostream& out) { out << text; });
}

Symbol Symbol::load(const std::string& path) {
  const uint64_t size = file_size(path);
  constexpr uint64_t kMaxJson = 1ull << 30;
  if (size > kMaxJson)
    throw InputError(str(path, ": ", size, " bytes is too large for a symbol file"));
  return from_json(read_file(path), path);
}

}  // namespace mx::graph
