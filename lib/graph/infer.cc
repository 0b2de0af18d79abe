#include "graph/infer.h"

#include "base/error.h"
#include "base/strings.h"
#include "graph/symbol.h"
#include "op/infer_util.h"

namespace mx::graph {
namespace {

// One sweep over the nodes in `order`; returns true when anything changed.
template <typename Value, typename InferFn, typename MergeFn>
bool sweep(const IndexedGraph& g, std::vector<Value>& entries, bool reverse, InferFn infer,
           MergeFn merge) {
  bool changed = false;
  const size_t n = g.num_nodes();
  for (size_t step = 0; step < n; ++step) {
    const uint32_t id = static_cast<uint32_t>(reverse ? n - 1 - step : step);
    const Node& node = g.node(id);
    if (node.is_variable()) continue;
    const size_t num_args = node.op->input_names().size();
    std::vector<Value> in, aux, out;
    for (size_t k = 0; k < node.inputs.size(); ++k)
      (k < num_args ? in : aux).push_back(entries[g.entry_id(node.inputs[k])]);
    for (uint32_t k = 0; k < node.num_outputs(); ++k) out.push_back(entries[g.entry_id(id, k)]);
    infer(node, in, aux, out);
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      Value& slot = entries[g.entry_id(node.inputs[k])];
      const Value& v = k < num_args ? in[k] : aux[k - num_args];
      changed = merge(slot, v, node, k) || changed;
    }
    for (uint32_t k = 0; k < node.num_outputs(); ++k) {
      Value& slot = entries[g.entry_id(id, k)];
      changed = merge(slot, out[k], node, node.inputs.size() + k) || changed;
    }
  }
  return changed;
}

}  // namespace

std::vector<Shape> infer_entry_shapes(const IndexedGraph& g, std::vector<Shape> shapes) {
  for (uint32_t v : g.variables()) {
    const Node& node = g.node(v);
    auto it = node.attrs.find("__shape__");
    if (it == node.attrs.end()) continue;
    Shape declared;
    try {
      declared = Shape::parse(it->second);
    } catch (const InputError& e) {
      throw InputError("variable '" + node.name + "': attribute __shape__: " + e.what());
    }
    // MXNet 1.x (legacy shapes) writes 0 for an unknown dimension.
    for (int i = 0; i < declared.ndim(); ++i)
      if (declared[i] == 0) declared[i] = -1;
    Shape& slot = shapes[g.entry_id(v, 0)];
    try {
      op::assign_shape(slot, declared, "variable '" + node.name + "'");
    } catch (const InputError& e) {
      throw InputError(std::string(e.what()) + " (given shape vs. its __shape__ attribute)");
    }
  }
  auto infer = [](const Node& node, op::ShapeVector& in, op::ShapeVector& aux,
                  op::ShapeVector& out) { node.op->infer_shape(in, aux, out); };
  auto merge = [](Shape& slot, const Shape& value, const Node& node, size_t) {
    Shape before = slot;
    try {
      op::assign_shape(slot, value, "shape");
    } catch (const InputError& e) {
      throw InputError(node.op->owner() + ": " + e.what());
    }
    return slot != before;
  };
  for (int iteration = 0; iteration < 64; ++iteration) {
    bool changed = sweep(g, shapes, false, infer, merge);
    changed = sweep(g, shapes, true, infer, merge) || changed;
    if (!changed) break;
  }
  return shapes;
}

std::vector<std::optional<DType>> infer_entry_types(const IndexedGraph& g,
                                                    std::vector<std::optional<DType>> types) {
  for (uint32_t v : g.variables()) {
    const Node& node = g.node(v);
    auto it = node.attrs.find("__dtype__");
    if (it == node.attrs.end()) continue;
    // MXNet stores the type flag as a number ("0" for float32).
    std::optional<DType> declared;
    try {
      int flag = std::stoi(it->second);
      if (is_valid_dtype_flag(flag)) declared = static_cast<DType>(flag);
    } catch (const std::exception&) {
      declared = parse_dtype(it->second);
    }
    if (!declared)
      throw InputError("variable '" + node.name + "': unknown __dtype__ '" + it->second + "'");
    op::assign_type(types[g.entry_id(v, 0)], declared, "variable '" + node.name + "'");
  }
  auto infer = [](const Node& node, op::DTypeVector& in, op::DTypeVector& aux,
                  op::DTypeVector& out) { node.op->infer_type(in, aux, out); };
  auto merge = [](std::optional<DType>& slot, const std::optional<DType>& value, const Node& node,
                  size_t) {
    auto before = slot;
    try {
      op::assign_type(slot, value, "dtype");
    } catch (const InputError& e) {
      throw InputError(node.op->owner() + ": " + e.what());
    }
    return slot != before;
  };
  for (int iteration = 0; iteration < 64; ++iteration) {
    bool changed = sweep(g, types, false, infer, merge);
    changed = sweep(g, types, true, infer, merge) || changed;
    if (!changed) break;
  }
  return types;
}

ShapeInference Symbol::infer_shape(const ShapeMap& known) const {
  IndexedGraph g(outputs_);
  std::vector<Shape> shapes(g.num_entries());
  std::vector<std::string> names;
  for (uint32_t v : g.variables()) names.push_back(g.node(v).name);
  for (const auto& [name, shape] : known) {
    bool found = false;
    for (uint32_t v : g.variables())
      if (g.node(v).name == name) {
        shapes[g.entry_id(v, 0)] = shape;
        found = true;
      }
    if (!found)
      throw InputError("infer_shape: '" + name + "' is not an argument of the symbol" +
                       did_you_mean(name, names));
  }
  shapes = infer_entry_shapes(g, shapes);
  ShapeInference result;
  result.complete = true;
  for (uint32_t v : g.variables()) {
    const Shape& s = shapes[g.entry_id(v, 0)];
    (g.is_aux_variable(v) ? result.aux : result.arguments).push_back(s);
    result.complete = result.complete && s.is_known();
  }
  for (const auto& e : outputs_) {
    const Shape& s = shapes[g.entry_id(e)];
    result.outputs.push_back(s);
    result.complete = result.complete && s.is_known();
  }
  return result;
}

TypeInference Symbol::infer_type(const DTypeMap& known) const {
  IndexedGraph g(outputs_);
  std::vector<std::optional<DType>> types(g.num_entries());
  std::vector<std::string> names;
  for (uint32_t v : g.variables()) names.push_back(g.node(v).name);
  for (const auto& [name, dtype] : known) {
    bool found = false;
    for (uint32_t v : g.variables())
      if (g.node(v).name == name) {
        types[g.entry_id(v, 0)] = dtype;
        found = true;
      }
    if (!found)
      throw InputError("infer_type: '" + name + "' is not an argument of the symbol" +
                       did_you_mean(name, names));
  }
  types = infer_entry_types(g, types);
  TypeInference result;
  result.complete = true;
  for (uint32_t v : g.variables()) {
    auto t = types[g.entry_id(v, 0)];
    (g.is_aux_variable(v) ? result.aux : result.arguments).push_back(t);
    result.complete = result.complete && t.has_value();
  }
  for (const auto& e : outputs_) {
    auto t = types[g.entry_id(e)];
    result.outputs.push_back(t);
    result.complete = result.complete && t.has_value();
  }
  return result;
}

}  // namespace mx::graph
