#include "viz/network_graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "base/strings.h"
#include "graph/indexed_graph.h"
#include "graph/infer.h"

namespace mx::viz {

namespace {

// A cluster needs this many layers: two (a conv and its BatchNorm) are not a block.
constexpr int kMinClusterSize = 3;

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// "(64, 20, 24, 24)" -> "64×20×24×24"; unknown: "?".
std::string shape_text(const Shape& shape) {
  if (!shape.is_known()) return "?";
  std::vector<std::string> dims;
  for (int i = 0; i < shape.ndim(); ++i) dims.push_back(std::to_string(shape[i]));
  return dims.empty() ? "scalar" : join(dims, "×");
}

// "(5, 5)" or "[5,5]" -> "5x5".
std::string tuple_text(std::string v) {
  std::string out;
  for (char c : v) {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ' ') continue;
    out += c == ',' ? 'x' : c;
  }
  return out;
}

// A stride or dilation "2x2" -> "2"; "" when it is all ones (the default).
std::string step_text(const std::string& v) {
  const std::string t = tuple_text(v);
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    const size_t x = t.find('x', start);
    parts.push_back(t.substr(start, x - start));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  const bool same =
      std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return p == parts[0]; });
  if (same && parts[0] == "1") return "";
  return same ? parts[0] : t;
}

std::string get(const std::map<std::string, std::string>& m, const std::string& k,
                const std::string& fallback = "") {
  auto it = m.find(k);
  return it == m.end() ? fallback : it->second;
}

std::string fill_color(const std::string& op) {
  if (op == "Convolution" || op == "Deconvolution" || op == "FullyConnected") return "#fb8072";
  if (op == "BatchNorm" || op == "LayerNorm" || op == "InstanceNorm") return "#bebada";
  if (op == "Activation" || op == "LeakyReLU" || op == "relu" || op == "sigmoid" || op == "tanh")
    return "#ffffb3";
  if (op == "Pooling") return "#80b1d3";
  if (op == "Concat" || op == "Flatten" || op == "Reshape" || op == "transpose") return "#fdb462";
  if (op.find("Softmax") != std::string::npos || op == "softmax" ||
      op.find("Output") != std::string::npos)
    return "#b3de69";
  return "#fccde5";
}

// The clusters: name prefixes (at '_') that at least kMinClusterSize layers
// share, but not all of them; nested by prefix.
struct Clusters {
  std::vector<std::string> names;              // sorted: a parent before its children
  std::map<std::string, std::string> parent;   // "" at the top
  std::map<std::string, std::string> of_node;  // layer name -> its deepest cluster ("" none)
};

bool inside(const std::string& name, const std::string& prefix) {
  return name == prefix ||
         (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0 &&
          name[prefix.size()] == '_');
}

Clusters find_clusters(const std::vector<std::string>& layers) {
  std::set<std::string> candidates;
  for (const auto& n : layers)
    for (size_t pos = n.find('_'); pos != std::string::npos; pos = n.find('_', pos + 1))
      if (pos > 0) candidates.insert(n.substr(0, pos));
  Clusters c;
  for (const auto& p : candidates) {
    const auto count = std::count_if(layers.begin(), layers.end(),
                                     [&](const std::string& n) { return inside(n, p); });
    if (count >= kMinClusterSize && static_cast<size_t>(count) < layers.size())
      c.names.push_back(p);
  }
  auto deepest = [&](const std::string& name, bool strict) {
    std::string best;
    for (const auto& p : c.names)
      if (inside(name, p) && !(strict && name == p) && p.size() > best.size()) best = p;
    return best;
  };
  for (const auto& p : c.names) c.parent[p] = deepest(p, true);
  for (const auto& n : layers) c.of_node[n] = deepest(n, false);
  return c;
}

}  // namespace

std::string layer_summary(const std::string& op, const std::map<std::string, std::string>& params) {
  if (op == "Convolution" || op == "Deconvolution") {
    std::string s = tuple_text(get(params, "kernel", "?"));
    if (params.count("stride") && !step_text(params.at("stride")).empty())
      s += "/" + step_text(params.at("stride"));
    if (params.count("num_filter")) s += ", " + params.at("num_filter") + " filters";
    if (params.count("num_group") && params.at("num_group") != "1")
      s += ", " + params.at("num_group") + " groups";
    return s;
  }
  if (op == "FullyConnected") return get(params, "num_hidden", "?") + " units";
  if (op == "Pooling") {
    const std::string type = get(params, "pool_type", "max");
    if (get(params, "global_pool") == "True" || get(params, "global_pool") == "true" ||
        get(params, "global_pool") == "1")
      return "global " + type;
    std::string s = type + " " + tuple_text(get(params, "kernel", "?"));
    if (params.count("stride") && !step_text(params.at("stride")).empty())
      s += "/" + step_text(params.at("stride"));
    return s;
  }
  if (op == "Activation" || op == "LeakyReLU") return get(params, "act_type", "");
  if (op == "BatchNorm" || op == "Flatten" || op == "elemwise_add" || op == "SoftmaxOutput")
    return "";
  if (op == "Dropout") return "p " + get(params, "p", "0.5");
  std::vector<std::string> parts;
  for (const auto& [k, v] : params) {
    if (parts.size() == 3) break;
    if (v.size() > 24) continue;
    parts.push_back(k + " " + v);
  }
  return join(parts, ", ");
}

std::string network_dot(const graph::Symbol& symbol, const NetworkPicture& picture) {
  graph::IndexedGraph g(symbol.outputs());
  std::vector<Shape> entry(g.num_entries());
  for (uint32_t v : g.variables()) {
    auto it = picture.shapes.find(g.node(v).name);
    if (it != picture.shapes.end()) entry[g.entry_id(v, 0)] = it->second;
  }
  try {
    entry = graph::infer_entry_shapes(g, entry);
  } catch (const std::exception&) {
    // A picture of a network whose shapes do not infer: shapes left as "?".
  }
  auto shown = [&](uint32_t id) {
    const graph::Node& n = g.node(id);
    return !n.is_variable() || picture.inputs.count(n.name) != 0;
  };
  std::vector<std::string> layers;
  for (uint32_t id = 0; id < g.num_nodes(); ++id)
    if (!g.node(id).is_variable()) layers.push_back(g.node(id).name);
  const Clusters clusters = find_clusters(layers);

  // The node statements, by the cluster they sit in.
  std::map<std::string, std::vector<std::string>> statements;
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    if (!shown(id)) continue;
    const graph::Node& n = g.node(id);
    const std::string node_id = "n" + std::to_string(id);
    if (n.is_variable()) {
      statements[""].push_back(node_id + " [shape=oval, fillcolor=\"#8dd3c7\", label=" +
                               dot_quote(n.name + "\n" + shape_text(entry[g.entry_id(id, 0)])) +
                               "];");
      continue;
    }
    const std::string op = n.op->def().name;
    const std::string summary = layer_summary(op, graph::param_attrs(n.attrs));
    std::string label = n.name + "\n" + op + (summary.empty() ? "" : ": " + summary) + "\n→ " +
                        shape_text(entry[g.entry_id(id, 0)]);
    statements[clusters.of_node.at(n.name)].push_back(node_id + " [fillcolor=\"" + fill_color(op) +
                                                      "\", label=" + dot_quote(label) + "];");
  }

  std::ostringstream out;
  out << "digraph network {\n"
      << "  graph [rankdir=TB, fontname=\"DejaVu Sans\", fontsize=14, labelloc=t, nodesep=0.3, "
         "ranksep=0.35, label="
      << dot_quote(picture.title) << "];\n"
      << "  node [shape=box, style=\"rounded,filled\", fontname=\"DejaVu Sans\", fontsize=11, "
         "margin=\"0.12,0.05\"];\n"
      << "  edge [fontname=\"DejaVu Sans\", fontsize=9, color=\"#555555\", "
         "fontcolor=\"#333333\"];\n";
  std::map<std::string, std::vector<std::string>> children;
  for (const auto& c : clusters.names) children[clusters.parent.at(c)].push_back(c);
  int cluster_index = 0;
  // Nested clusters, depth first.
  std::function<void(const std::string&, int)> emit = [&](const std::string& cluster, int depth) {
    const std::string pad(static_cast<size_t>(2 * depth), ' ');
    for (const auto& s : statements[cluster]) out << pad << "  " << s << "\n";
    for (const auto& child : children[cluster]) {
      out << pad << "  subgraph cluster_" << cluster_index++ << " {\n"
          << pad << "    label=" << dot_quote(child)
          << "; style=\"rounded,dashed\"; color=\"#888888\"; fontsize=12; labeljust=l;\n";
      emit(child, depth + 1);
      out << pad << "  }\n";
    }
  };
  emit("", 0);
  for (uint32_t id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.is_variable() || !shown(id)) continue;
    for (const auto& e : n.inputs) {
      const uint32_t from = g.node_id(e.node.get());
      if (!shown(from)) continue;
      out << "  n" << from << " -> n" << id
          << " [label=" << dot_quote(" " + shape_text(entry[g.entry_id(e)])) << "];\n";
    }
  }
  out << "}\n";
  return out.str();
}

}  // namespace mx::viz
