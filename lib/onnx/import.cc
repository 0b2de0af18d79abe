#include "onnx/import.h"

#include "base/strings.h"
#include "onnx/constant_folding.h"
#include "onnx/import_ops.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"

namespace mx::onnx {
using graph::Symbol;

void unsupported(const std::string& what) { throw UnsupportedModel(what); }

// --- ImportContext -------------------------------------------------------------

Symbol ImportContext::get(const std::string& name, bool as_aux) {
  if (auto it = tensors.find(name); it != tensors.end()) {
    // A constant made a variable keeps its role: mx's graphs hold an array
    // as an argument or as an auxiliary state, never both.
    const graph::Node& node = *it->second.outputs()[0].node;
    if (node.is_variable() && (as_aux ? args.count(node.name) : aux.count(node.name)))
      unsupported("'" + name + "' is used as a weight and a statistic");
    return it->second;
  }
  auto c = constants.find(name);
  if (c == constants.end()) throw InputError("tensor '" + name + "' is used before it is made");
  std::string var = name;  // the variable's name: the tensor's, or the one chosen for it
  if (auto alias = variable_names.find(name);
      alias != variable_names.end() && !names_.count(alias->second))
    var = alias->second;
  (as_aux ? aux : args)[var] = c->second;
  names_.insert(var);
  Symbol v = Symbol::variable(var);
  tensors[name] = v;
  return v;
}

const NDArray* ImportContext::constant(const std::string& name) const {
  auto it = constants.find(name);
  return it == constants.end() ? nullptr : &it->second;
}

Shape ImportContext::shape(const std::string& name) {
  if (const NDArray* c = constant(name)) return c->shape();
  if (auto it = shape_cache_.find(name); it != shape_cache_.end()) return it->second;
  auto t = tensors.find(name);
  if (t == tensors.end()) throw InputError("tensor '" + name + "' is used before it is made");
  graph::ShapeMap known = input_shapes;
  for (const auto& [n, a] : args) known[n] = a.shape();
  for (const auto& [n, a] : aux) known[n] = a.shape();
  // Inference wants only the arguments of this sub-graph.
  graph::ShapeMap relevant;
  for (const auto& a : t->second.list_arguments())
    if (known.count(a)) relevant[a] = known[a];
  for (const auto& a : t->second.list_auxiliary_states())
    if (known.count(a)) relevant[a] = known[a];
  Shape s;
  try {
    s = t->second.infer_shape(relevant).outputs.at(0);
  } catch (const InputError& e) {
    throw InputError(str("shape inference at '", name, "': ", e.what()));
  }
  shape_cache_[name] = s;
  return s;
}

int ImportContext::rank(const std::string& name) {
  Shape s = shape(name);
  if (!s.rank_known()) unsupported("the rank of '" + name + "' is not known");
  return s.ndim();
}

DType ImportContext::dtype(const std::string& name) const {
  if (const NDArray* c = constant(name)) return c->dtype();
  if (auto it = input_dtypes.find(name); it != input_dtypes.end()) return it->second;
  return DType::kFloat32;  // every mapped operator gives float32 for float32 inputs
}

std::string ImportContext::unique(const std::string& name) {
  std::string candidate = name;
  for (int i = 1; names_.count(candidate); ++i) candidate = str(name, "_", i);
  names_.insert(candidate);
  return candidate;
}

Symbol ImportContext::op(const std::string& op, const std::string& name,
                         const std::map<std::string, std::string>& attrs,
                         const std::vector<Symbol>& inputs) {
  return Symbol::create(op, unique(name), attrs, inputs);
}

// --- ImportNode ----------------------------------------------------------------

const ::onnx::AttributeProto* ImportNode::attr(const std::string& key) const {
  for (const auto& a : proto.attribute())
    if (a.name() == key) return &a;
  return nullptr;
}
bool ImportNode::has(const std::string& key) const { return attr(key) != nullptr; }
int64_t ImportNode::i(const std::string& key, int64_t fallback) const {
  const auto* a = attr(key);
  return a ? a->i() : fallback;
}
float ImportNode::f(const std::string& key, float fallback) const {
  const auto* a = attr(key);
  return a ? a->f() : fallback;
}
std::string ImportNode::s(const std::string& key, const std::string& fallback) const {
  const auto* a = attr(key);
  return a ? a->s() : fallback;
}
std::vector<int64_t> ImportNode::ints(const std::string& key) const {
  const auto* a = attr(key);
  if (!a) return {};
  return {a->ints().begin(), a->ints().end()};
}
std::string ImportNode::input(int k) const {
  return k < proto.input_size() ? proto.input(k) : std::string();
}
int ImportNode::num_outputs_used() const {
  int n = 0;
  for (const auto& o : proto.output())
    if (!o.empty()) ++n;
  return n;
}

// --- The driver ----------------------------------------------------------------

std::vector<std::string> importable_operators() {
  std::vector<std::string> names;
  for (const auto& [name, op] : import_rules()) names.push_back(name);
  return names;
}

namespace {

bool is_default_domain(const ::onnx::NodeProto& n) {
  return n.domain().empty() || n.domain() == "ai.onnx";
}

// The import rule of a node: its operator, "com.microsoft.NAME" for ONNX
// Runtime's contributed operators, "" for other domains.
std::string rule_key(const ::onnx::NodeProto& n) {
  if (is_default_domain(n)) return n.op_type();
  if (n.domain() == "com.microsoft") return n.domain() + "." + n.op_type();
  return "";
}

std::string describe_node(const ::onnx::NodeProto& n, int index) {
  return str("node '", n.name().empty() ? str("#", index) : n.name(), "' (", n.op_type(), ")");
}

ImportedInput read_input(const ::onnx::ValueInfoProto& info, const std::string& source) {
  ImportedInput in{info.name(), Shape(), DType::kFloat32};
  if (!info.type().has_tensor_type())
    throw UnsupportedModel(source + ": input '" + info.name() + "' is not a tensor");
  const auto& t = info.type().tensor_type();
  auto dtype = dtype_from_onnx(t.elem_type());
  if (!dtype)
    throw UnsupportedModel(source + ": input '" + info.name() + "' has element type " +
                           onnx_type_name(t.elem_type()) + ", which mx does not support");
  in.dtype = *dtype;
  if (t.has_shape()) {
    std::vector<int64_t> dims;
    for (const auto& d : t.shape().dim())
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
    if (dims.size() > static_cast<size_t>(Shape::kMaxNdim))
      throw UnsupportedModel(source + ": input '" + info.name() + "' has too many dimensions");
    in.shape = Shape(dims);
  }
  return in;
}

// Every unsupported operator, before anything is built: UnsupportedModel
// naming them all.
void check_operators_supported(const ::onnx::GraphProto& g, const std::string& source) {
  std::vector<std::string> missing;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (!import_rules().count(rule_key(n)))
      missing.push_back(describe_node(n, i) +
                        (is_default_domain(n) ? "" : " of domain '" + n.domain() + "'"));
  }
  if (!missing.empty())
    throw UnsupportedModel(str(source, ": ", missing.size(), " operator",
                               missing.size() == 1 ? "" : "s",
                               " not supported: ", join(missing, ", ")));
}

// The graph's names, its initializers as constants and its inputs as
// variables (or as the constants `options` gives for them).
std::vector<ImportedInput> read_inputs(const ::onnx::GraphProto& g, const std::string& source,
                                       const ImportOptions& options, ImportContext& ctx) {
  std::vector<ImportedInput> inputs;
  for (const auto& n : g.node()) {
    for (const auto& name : n.input()) ctx.onnx_names.insert(name);
    for (const auto& name : n.output()) ctx.onnx_names.insert(name);
  }
  for (const auto& init : g.initializer()) ctx.onnx_names.insert(init.name());
  for (const auto& init : g.initializer())
    ctx.constants[init.name()] =
        tensor_to_array(init, source + ": initializer '" + init.name() + "'");
  for (const auto& info : g.input()) {
    if (ctx.constants.count(info.name())) continue;  // IR < 4 lists initializers as inputs
    ImportedInput in = read_input(info, source);
    if (auto v = options.input_values.find(info.name()); v != options.input_values.end())
      ctx.constants[info.name()] = v->second;
    ctx.input_dtypes[in.name] = in.dtype;
    ctx.input_shapes[in.name] = in.shape;
    ctx.tensors[in.name] = Symbol::variable(in.name);
    ctx.unique(in.name);
    inputs.push_back(in);
  }

  return inputs;
}

// Node i of the graph through its import rule; errors name the node.
void import_node(ImportContext& ctx, const ::onnx::NodeProto& n, int i, const std::string& source) {
  const ImportOp& op = import_rules().at(rule_key(n));
  std::string base = n.name().empty() ? to_lower(n.op_type()) + str(i) : n.name();
  ImportNode node{n, ctx.unique(base)};
  try {
    // Shape arithmetic on constants is computed now (constant_folding.h).
    if (fold_constant(ctx, node)) return;
    for (int k = 0; k < n.input_size(); ++k) {
      if (ctx.booleans.count(n.input(k)) && !op.takes_booleans)
        unsupported(str("input '", n.input(k),
                        "' is a BOOL tensor (mx takes comparison "
                        "results into And, Or, Xor, Not and Cast only)"));
      if (auto q = ctx.quantized.find(n.input(k));
          q != ctx.quantized.end() && !op.takes_quantized && !(op.keeps_quantization && k == 0))
        unsupported(str("input '", n.input(k), "' is a quantized (", dtype_name(q->second.type),
                        ") tensor, which mx reads only through DequantizeLinear, the QLinear "
                        "operators, MaxPool and the shape operators"));
      if (n.input(k).empty() || op.non_float_inputs.count(k)) continue;
      DType t = ctx.dtype(n.input(k));
      if (t != DType::kFloat32)
        unsupported(str("input '", n.input(k), "' has element type ", dtype_name(t),
                        " (mx imports float32 operands)"));
    }
    std::vector<Symbol> outs = op.rule(ctx, node);
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (static_cast<size_t>(k) >= outs.size() && ctx.constants.count(n.output(k))) continue;
      if (static_cast<size_t>(k) >= outs.size())
        unsupported(str("output ", k, " ('", n.output(k), "') is not supported"));
      ctx.tensors[n.output(k)] = outs[static_cast<size_t>(k)];
      // A quantized input through MaxPool or a shape operator stays quantized alike.
      if (op.keeps_quantization && n.input_size() > 0)
        if (auto q = ctx.quantized.find(n.input(0)); q != ctx.quantized.end())
          ctx.quantized[n.output(k)] = q->second;
    }
  } catch (const UnsupportedModel& e) {
    throw UnsupportedModel(source + ": " + describe_node(n, i) + ": " + e.what());
  } catch (const std::exception& e) {
    // Whatever this node's contents make fail is a problem of the file.
    throw InputError(source + ": " + describe_node(n, i) + ": " + e.what());
  }
}

// A graph output that is a quantized tensor (held as its real value): that
// value quantized again by QuantizeLinear with the tensor's scale and zero
// point, so the output holds the integers ONNX Runtime gives.
Symbol quantized_output(ImportContext& ctx, const std::string& name, const Quantization& q,
                        const std::string& source) {
  if (q.type != DType::kUint8 && q.type != DType::kInt8)
    throw UnsupportedModel(str(source, ": graph output '", name, "' is quantized to ",
                               dtype_name(q.type), " (mx's quantized outputs are uint8 or int8)"));
  const auto count = static_cast<int64_t>(q.scale.size());
  const std::string scale = ctx.unique(name + "_scale"), zero = ctx.unique(name + "_zero_point");
  ctx.constants[scale] = NDArray::from_vector<float>(Shape{count}, q.scale);
  if (q.type == DType::kUint8)
    ctx.constants[zero] = NDArray::from_vector<uint8_t>(
        Shape{count}, std::vector<uint8_t>(q.zero_point.begin(), q.zero_point.end()));
  else
    ctx.constants[zero] = NDArray::from_vector<int8_t>(
        Shape{count}, std::vector<int8_t>(q.zero_point.begin(), q.zero_point.end()));
  return ctx.op("QuantizeLinear", ctx.unique(name + "_quantize"),
                {{"axis", std::to_string(q.axis)}}, {ctx.get(name), ctx.get(scale), ctx.get(zero)});
}

// Output `out` of the graph, refused where mx's outputs cannot be it.
Symbol graph_output(ImportContext& ctx, const ::onnx::ValueInfoProto& out,
                    const std::string& source) {
  if (!ctx.tensors.count(out.name()) && !ctx.constants.count(out.name()))
    throw InputError(source + ": graph output '" + out.name() + "' is not computed");
  if (auto c = ctx.constants.find(out.name()); c != ctx.constants.end() &&
                                               !ctx.tensors.count(out.name()) &&
                                               c->second.dtype() != DType::kFloat32)
    throw UnsupportedModel(str(source, ": graph output '", out.name(), "' is a constant of ",
                               dtype_name(c->second.dtype()), " (mx's outputs are float32)"));
  if (auto q = ctx.quantized.find(out.name()); q != ctx.quantized.end())
    return quantized_output(ctx, out.name(), q->second, source);
  if (ctx.booleans.count(out.name()))
    throw UnsupportedModel(str(source, ": graph output '", out.name(),
                               "' is a BOOL tensor (mx's outputs are float32)"));
  Symbol s = ctx.get(out.name());
  // An output that is an input or a constant needs a node of its own.
  if (s.outputs()[0].node->is_variable()) s = ctx.op("_copy", out.name() + "_copy", {}, {s});
  return s;
}

}  // namespace

ImportedModel import_model(const ::onnx::ModelProto& model, const std::string& source,
                           const ImportOptions& options) {
  ImportContext ctx;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") ctx.opset = static_cast<int>(o.version());
  if (ctx.opset < kMinImportOpset || ctx.opset > kMaxImportOpset)
    throw UnsupportedModel(str(source, ": opset ", ctx.opset,
                               " of the default domain is not supported (", kMinImportOpset, " to ",
                               kMaxImportOpset, ")"));
  const auto& g = model.graph();
  check_operators_supported(g, source);
  ImportedModel result;
  result.inputs = read_inputs(g, source, options, ctx);
  for (int i = 0; i < g.node_size(); ++i) import_node(ctx, g.node(i), i, source);

  std::vector<Symbol> outputs;
  for (const auto& out : g.output()) {
    outputs.push_back(graph_output(ctx, out, source));
    result.output_names.push_back(out.name());
  }
  if (outputs.empty()) throw InputError(source + ": the graph has no outputs");
  result.symbol = outputs.size() == 1 ? outputs[0] : Symbol::group(outputs);
  result.args = ctx.args;
  result.aux = ctx.aux;
  result.opset = ctx.opset;
  for (const auto& w : ctx.warnings) result.warnings.push_back(source + ": " + w);
  // Inputs only read as constants (a Reshape's shape) are no longer inputs.
  auto args = result.symbol.list_arguments();
  auto aux = result.symbol.list_auxiliary_states();
  std::erase_if(result.inputs, [&](const ImportedInput& in) {
    return std::find(args.begin(), args.end(), in.name) == args.end() &&
           std::find(aux.begin(), aux.end(), in.name) == aux.end();
  });
  return result;
}

ImportedModel import_model(const std::string& path, const ImportOptions& options) {
  return import_model(read_model(path), path, options);
}

}  // namespace mx::onnx
