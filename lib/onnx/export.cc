#include "onnx/export.h"

#include <set>

#include "base/strings.h"
#include "onnx/export_ops.h"
#include "onnx/export_qdq.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"

namespace mx::onnx {
using graph::Node;

namespace {

// The IR version that goes with each opset (onnx/helper.py's table).
int64_t ir_version_for(int opset) { return opset <= 11 ? 6 : opset <= 14 ? 7 : 8; }

void set_type(::onnx::ValueInfoProto* info, const std::string& name, DType dtype,
              const Shape& shape, bool dynamic_batch) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(dtype_to_onnx(dtype));
  if (!shape.rank_known()) return;
  auto* dims = tensor->mutable_shape();
  for (int i = 0; i < shape.ndim(); ++i) {
    auto* d = dims->add_dim();
    if (i == 0 && dynamic_batch)
      d->set_dim_param("N");
    else if (shape[i] >= 0)
      d->set_dim_value(shape[i]);
  }
}

// Label inputs of loss layers: not part of an inference graph.
std::set<std::string> label_variables(const std::vector<std::shared_ptr<Node>>& nodes) {
  std::set<std::string> labels;
  for (const auto& n : nodes)
    if (!n->is_variable() && n->op->def().is_loss)
      for (size_t i = 1; i < n->inputs.size(); ++i)
        if (n->inputs[i].node->is_variable()) labels.insert(n->inputs[i].node->name);
  return labels;
}

std::string entry_name(const graph::NodeEntry& e) { return e.node->output_name(e.index); }

}  // namespace

std::vector<std::string> exportable_operators() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : export_rules()) names.push_back(name);
  return names;
}

::onnx::ModelProto export_model(const graph::Symbol& symbol,
                                const std::map<std::string, NDArray>& args,
                                const std::map<std::string, NDArray>& aux,
                                const ExportOptions& options) {
  if (options.opset < kMinExportOpset || options.opset > kMaxExportOpset)
    throw InputError(str("opset ", options.opset, " is not supported for export (choose ",
                         kMinExportOpset, " to ", kMaxExportOpset, ")"));
  const auto nodes = graph::topo_order(symbol.outputs());
  const auto labels = label_variables(nodes);

  // Which operators have no rule, all at once.
  std::vector<std::string> problems;
  for (const auto& n : nodes)
    if (!n->is_variable() && !export_rules().count(n->op->def().name)) {
      const auto reason = unexported_operators().find(n->op->def().name);
      problems.push_back(
          graph::node_owner(n->name, n->op->def().name) + ": " +
          (reason != unexported_operators().end() ? reason->second : "no ONNX equivalent"));
    }
  if (!problems.empty()) throw InputError("cannot export to ONNX: " + join(problems, "; "));

  // Inputs: the variables that have no array and are not labels.
  std::vector<std::string> inputs;
  graph::ShapeMap known;
  for (const auto& n : nodes) {
    if (!n->is_variable() || labels.count(n->name)) continue;
    if (auto it = args.find(n->name); it != args.end()) {
      known[n->name] = it->second.shape();
    } else if (auto a = aux.find(n->name); a != aux.end()) {
      known[n->name] = a->second.shape();
    } else {
      inputs.push_back(n->name);
      auto s = options.input_shapes.find(n->name);
      if (s == options.input_shapes.end())
        throw InputError("input '" + n->name + "' needs a shape (e.g. --data-shape C,H,W)");
      known[n->name] = s->second;
    }
  }

  ExportContext ctx;
  ::onnx::ModelProto model;
  ctx.graph = model.mutable_graph();
  ctx.opset = options.opset;
  ctx.args = &args;
  ctx.aux = &aux;
  {
    graph::Symbol internals = symbol.get_internals();
    auto inferred = internals.infer_shape(known);
    auto names = internals.list_outputs();
    for (size_t i = 0; i < names.size(); ++i) ctx.shapes[names[i]] = inferred.outputs[i];
    for (const auto& [name, shape] : known) ctx.shapes[name] = shape;
  }

  for (const auto& n : nodes) {
    if (n->is_variable()) continue;
    const std::string op = n->op->def().name;
    ExportNode e{*n, n->op->attrs(), {}, {}};
    for (const auto& in : n->inputs) e.inputs.push_back(entry_name(in));
    for (uint32_t i = 0; i < n->num_visible_outputs(); ++i) e.outputs.push_back(n->output_name(i));
    try {
      export_rules().at(op)(ctx, e);
    } catch (const InputError& err) {
      problems.push_back(graph::node_owner(n->name, op) + ": " + err.what());
    }
  }
  if (!problems.empty()) throw InputError("cannot export to ONNX: " + join(problems, "; "));
  // Convolutions marked int8 as QuantizeLinear/DequantizeLinear (QDQ).
  export_int8_layers(ctx, nodes, symbol.outputs());

  // Initializers for the arrays the nodes read (not those whose int8 copy
  // a DequantizeLinear gives back under their name).
  std::set<std::string> used, made;
  for (const auto& node : ctx.graph->node()) {
    for (const auto& in : node.input()) used.insert(in);
    for (const auto& out : node.output()) made.insert(out);
  }
  for (const auto& n : nodes) {
    if (!n->is_variable() || !used.count(n->name) || made.count(n->name)) continue;
    const NDArray* array = nullptr;
    if (auto it = args.find(n->name); it != args.end()) array = &it->second;
    if (auto it = aux.find(n->name); it != aux.end()) array = &it->second;
    if (array) array_to_tensor(*array, n->name, ctx.graph->add_initializer());
  }
  for (const auto& name : inputs)
    set_type(ctx.graph->add_input(), name, DType::kFloat32, known.at(name), options.dynamic_batch);
  // The outputs' element types: float32 but where an operator makes
  // another (QuantizeLinear's uint8 or int8).
  graph::DTypeMap variable_types;
  for (const auto& n : nodes) {
    if (!n->is_variable() || labels.count(n->name)) continue;
    const NDArray* a = ctx.array(n->name);
    variable_types[n->name] = a ? a->dtype() : DType::kFloat32;
  }
  const auto output_types = symbol.infer_type(variable_types).outputs;
  for (size_t k = 0; k < symbol.outputs().size(); ++k) {
    const std::string name = entry_name(symbol.outputs()[k]);
    auto s = ctx.shapes.find(name);
    set_type(ctx.graph->add_output(), name, output_types[k].value_or(DType::kFloat32),
             s == ctx.shapes.end() ? Shape() : s->second, options.dynamic_batch);
  }

  model.set_ir_version(ir_version_for(options.opset));
  model.set_producer_name("mx");
  model.set_producer_version(MX_VERSION_STRING);
  model.set_doc_string(options.doc);
  model.set_model_version(1);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(options.opset);
  ctx.graph->set_name("mx");
  ctx.graph->set_doc_string(options.doc);
  return model;
}

void export_model_file(const std::string& path, const graph::Symbol& symbol,
                       const std::map<std::string, NDArray>& args,
                       const std::map<std::string, NDArray>& aux, const ExportOptions& options) {
  write_model(path, export_model(symbol, args, aux, options));
}

}  // namespace mx::onnx
