// Symbol <-> MXNet 1.x JSON (nnvm's graph format). The writer reproduces
// the formatting of MXNet's dmlc JSON writer byte for byte, so a file read
// from MXNet and saved again is identical.
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "base/error.h"
#include "base/json_escape.h"
#include "base/strings.h"
#include "graph/indexed_graph.h"
#include "graph/symbol.h"
#include "op/registry.h"

namespace mx::graph {
namespace {

constexpr int kMXNetVersion = 10901;  // what mx writes as "mxnet_version" (1.9.1)

std::string quote(const std::string& s) { return "\"" + json_escape(s) + "\""; }

// dmlc's writer: a map with one entry stays on one line, longer ones take
// a line per entry; entries are separated by ", " and a newline.
void write_attrs(std::ostream& out, const std::map<std::string, std::string>& attrs,
                 const std::string& indent) {
  if (attrs.size() == 1) {
    out << "{" << quote(attrs.begin()->first) << ": " << quote(attrs.begin()->second) << "}";
    return;
  }
  out << "{";
  bool first = true;
  for (const auto& [k, v] : attrs) {
    out << (first ? "\n" : ", \n") << indent << "  " << quote(k) << ": " << quote(v);
    first = false;
  }
  out << "\n" << indent << "}";
}

// dmlc writes an array on one line when it has at most 10 plain elements,
// else one element per line, indented one level deeper than `indent`.
std::string json_array(const std::vector<std::string>& items, const std::string& indent) {
  if (items.size() <= 10) return "[" + join(items, ", ") + "]";
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", \n" : "\n") + indent + "  " + items[i];
  return s + "\n" + indent + "]";
}

template <typename T>
std::string inline_list(const std::vector<T>& items, const std::string& indent) {
  std::vector<std::string> text;
  for (const auto& i : items) text.push_back(std::to_string(i));
  return json_array(text, indent);
}

std::string entry_text(const IndexedGraph& g, const NodeEntry& e) {
  return str("[", g.node_id(e.node.get()), ", ", e.index, ", ", e.version, "]");
}

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw InputError(source + ": " + what);
}

}  // namespace

std::string Symbol::to_json() const {
  IndexedGraph g(outputs_);
  std::ostringstream out;
  out << "{\n  \"nodes\": [";
  for (uint32_t i = 0; i < g.num_nodes(); ++i) {
    const Node& n = g.node(i);
    out << (i ? ", \n" : "\n") << "    {\n";
    out << "      \"op\": " << quote(n.is_variable() ? "null" : n.op->def().name) << ", \n";
    out << "      \"name\": " << quote(n.name) << ", \n";
    if (!n.attrs.empty()) {
      out << "      \"attrs\": ";
      write_attrs(out, n.attrs, "      ");
      out << ", \n";
    }
    out << "      \"inputs\": [";
    for (size_t k = 0; k < n.inputs.size(); ++k)
      out << (k ? ", " : "") << entry_text(g, n.inputs[k]);
    out << "]\n    }";
  }
  out << "\n  ], \n";
  std::vector<uint32_t> arg_nodes = g.variables();
  out << "  \"arg_nodes\": " << inline_list(arg_nodes, "  ") << ", \n";
  std::vector<uint32_t> row_ptr{0};
  for (uint32_t i = 0; i < g.num_nodes(); ++i)
    row_ptr.push_back(row_ptr.back() +
                      g.node(i).declared_outputs.value_or(g.node(i).num_outputs()));
  out << "  \"node_row_ptr\": " << inline_list(row_ptr, "  ") << ", \n";
  std::vector<std::string> heads;
  for (const auto& h : outputs_) heads.push_back(entry_text(g, h));
  out << "  \"heads\": " << json_array(heads, "  ") << ", \n";
  out << "  \"attrs\": {\"mxnet_version\": [\"int\", " << kMXNetVersion << "]}\n}";
  return out.str();
}

Symbol Symbol::from_json(const std::string& text, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(source, str("not valid JSON at byte ", e.byte, ": ", e.what()));
  } catch (const nlohmann::json::exception& e) {  // e.g. a number too large for a double
    fail(source, str("not valid JSON: ", e.what()));
  }
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array())
    fail(source, "not an MXNet symbol file (no \"nodes\" list)");
  const auto& jnodes = doc["nodes"];
  std::vector<std::shared_ptr<Node>> nodes;
  nodes.reserve(jnodes.size());
  for (size_t i = 0; i < jnodes.size(); ++i) {
    const auto& jn = jnodes[i];
    const std::string where = str("node ", i);
    if (!jn.is_object() || !jn.contains("op") || !jn["op"].is_string() || !jn.contains("name") ||
        !jn["name"].is_string())
      fail(source, where + ": expected an object with string \"op\" and \"name\"");
    auto node = std::make_shared<Node>();
    node->name = jn["name"].get<std::string>();
    // MXNet 1.x writes "attrs"; older versions "param" (operator parameters)
    // and "attr" (other attributes). All become attrs.
    for (const char* key : {"attrs", "param", "attr"}) {
      if (!jn.contains(key)) continue;
      if (!jn[key].is_object())
        fail(source, str(where, " ('", node->name, "'): \"", key, "\" must be an object"));
      for (const auto& [k, v] : jn[key].items()) {
        if (!v.is_string())
          fail(source, str(where, " ('", node->name, "'): attribute '", k, "' must be a string"));
        node->attrs[k] = v.get<std::string>();
      }
    }
    const std::string op_name = jn["op"].get<std::string>();
    if (op_name != "null") {
      const op::OpDef* def = op::OpRegistry::get().lookup(op_name);
      if (def == nullptr) {
        std::vector<std::string> names;
        for (const auto* d : op::OpRegistry::get().list()) names.push_back(d->name);
        fail(source, str(where, " ('", node->name, "'): unknown operator '", op_name, "'",
                         did_you_mean(op_name, names)));
      }
      try {
        node->op.emplace(def->name, param_attrs(node->attrs), node_owner(node->name, def->name));
      } catch (const InputError& e) {
        fail(source, e.what());
      }
    }
    if (jn.contains("inputs")) {
      const auto& jin = jn["inputs"];
      if (!jin.is_array()) fail(source, where + ": \"inputs\" must be a list");
      for (const auto& e : jin) {
        if (!e.is_array() || e.size() < 2 || e.size() > 3)
          fail(source, where + " ('" + node->name + "'): an input must be [node, output, version]");
        for (const auto& part : e)
          if (!part.is_number_unsigned())
            fail(source, where + ": input indices must be non-negative integers");
        const uint64_t src = e[0].get<uint64_t>(), index = e[1].get<uint64_t>();
        const uint64_t version = e.size() == 3 ? e[2].get<uint64_t>() : 0;
        if (src >= i)
          fail(source, str(where, " ('", node->name, "'): input refers to node ", src,
                           ", which does not come before it"));
        if (index >= nodes[src]->num_outputs())
          fail(source, str(where, " ('", node->name, "'): input refers to output ", index, " of '",
                           nodes[src]->name, "', which has ", nodes[src]->num_outputs()));
        node->inputs.push_back(
            {nodes[src], static_cast<uint32_t>(index), static_cast<uint32_t>(version)});
      }
    }
    if (node->op) {
      const size_t expected = node->op->input_names().size() + node->op->aux_names().size();
      if (node->inputs.size() != expected)
        fail(source, str(where, " ('", node->name, "', ", node->op->def().name,
                         "): ", node->inputs.size(), " inputs, but the operator takes ", expected));
    } else if (!node->inputs.empty()) {
      fail(source, where + " ('" + node->name + "'): a variable cannot have inputs");
    }
    nodes.push_back(std::move(node));
  }
  // Keep output counts the file declares beyond the operator's own.
  if (doc.contains("node_row_ptr") && doc["node_row_ptr"].is_array() &&
      doc["node_row_ptr"].size() == nodes.size() + 1) {
    const auto& rows = doc["node_row_ptr"];
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!rows[i].is_number_unsigned() || !rows[i + 1].is_number_unsigned()) break;
      const uint64_t count = rows[i + 1].get<uint64_t>() - rows[i].get<uint64_t>();
      if (count > nodes[i]->num_outputs() && count < 1024)
        nodes[i]->declared_outputs = static_cast<uint32_t>(count);
    }
  }
  if (!doc.contains("heads") || !doc["heads"].is_array() || doc["heads"].empty())
    fail(source, "no \"heads\" (the symbol's outputs)");
  std::vector<NodeEntry> heads;
  for (const auto& h : doc["heads"]) {
    if (!h.is_array() || h.size() < 2 || !h[0].is_number_unsigned() || !h[1].is_number_unsigned())
      fail(source, "a head must be [node, output, version]");
    const uint64_t src = h[0].get<uint64_t>(), index = h[1].get<uint64_t>();
    if (src >= nodes.size() || index >= nodes[src]->num_outputs())
      fail(source, str("head [", src, ", ", index, "] refers to a missing node or output"));
    heads.push_back({nodes[src], static_cast<uint32_t>(index), 0});
  }
  return Symbol(heads);
}

}  // namespace mx::graph
