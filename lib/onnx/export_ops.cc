#include "onnx/export_ops.h"

#include <limits>

#include "base/int_tuple.h"
#include "base/param_value.h"
#include "onnx/tensor_proto.h"
#include "op/nn/activation_param.h"
#include "op/nn/batch_norm_param.h"
#include "op/nn/convolution_param.h"
#include "op/nn/fully_connected_param.h"
#include "op/nn/leaky_relu_param.h"
#include "op/nn/pooling_param.h"

namespace mx::onnx {
using ::onnx::NodeProto;

::onnx::NodeProto* ExportContext::add(const std::string& op_type, const std::string& name,
                                      const std::vector<std::string>& inputs,
                                      const std::vector<std::string>& outputs) {
  NodeProto* n = graph->add_node();
  n->set_op_type(op_type);
  n->set_name(unique(name));
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

std::string ExportContext::unique(const std::string& name) {
  int& count = used_[name];
  return count++ == 0 ? name : str(name, "_", count - 1);
}

std::string ExportContext::ints(const std::string& name, const std::vector<int64_t>& values) {
  auto* t = graph->add_initializer();
  t->set_name(unique(name));
  t->set_data_type(::onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return t->name();
}

std::string ExportContext::scalar(const std::string& name, float value) {
  auto* t = graph->add_initializer();
  t->set_name(unique(name));
  t->set_data_type(::onnx::TensorProto::FLOAT);
  t->add_float_data(value);
  return t->name();
}

std::string ExportContext::initializer(const std::string& name, const NDArray& value) {
  auto* t = graph->add_initializer();
  const std::string unique_name = unique(name);
  array_to_tensor(value, unique_name, t);
  return unique_name;
}

const NDArray* ExportContext::array(const std::string& tensor) const {
  for (const auto* arrays : {args, aux}) {
    if (arrays == nullptr) continue;
    if (auto it = arrays->find(tensor); it != arrays->end()) return &it->second;
  }
  return nullptr;
}

const Shape& ExportContext::shape_of(const std::string& tensor) const {
  auto it = shapes.find(tensor);
  if (it == shapes.end() || !it->second.rank_known())
    throw UnsupportedExport("the shape of '" + tensor + "' could not be inferred");
  return it->second;
}

std::string ExportNode::get(const std::string& key) const {
  auto it = params.find(key);
  return it == params.end() ? std::string() : it->second;
}

bool ExportNode::is_set(const std::string& key) const {
  const std::string v = get(key);
  return !v.empty() && v != "None";
}

bool ExportNode::flag(const std::string& key) const {
  return is_set(key) && param_value::parse_bool(get(key));
}

double ExportNode::number(const std::string& key) const {
  return param_value::parse_double(get(key));
}

void set_ints(NodeProto* n, const std::string& name, const std::vector<int64_t>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void set_int(NodeProto* n, const std::string& name, int64_t value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_float(NodeProto* n, const std::string& name, float value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

void set_string(NodeProto* n, const std::string& name, const std::string& value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}

void set_strings(NodeProto* n, const std::string& name, const std::vector<std::string>& values) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRINGS);
  for (const auto& v : values) a->add_strings(v);
}

namespace {

bool is_none(const std::string& v) { return v.empty() || v == "None"; }

// A window parameter (stride, dilate, pad, adj) as n values; unset (an empty
// tuple) is `fill` in every dimension.
std::vector<int64_t> dims(const Shape& s, size_t n, int64_t fill) {
  if (!s.rank_known() || s.ndim() == 0) return std::vector<int64_t>(n, fill);
  return s.to_vector();
}

std::vector<int64_t> twice(const std::vector<int64_t>& pad) {
  std::vector<int64_t> out = pad;
  out.insert(out.end(), pad.begin(), pad.end());
  return out;
}

int64_t positive_axis(int64_t axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

// Unsqueeze/Squeeze/ReduceSum take their axes as an input from opset 13.
NodeProto* with_axes(ExportContext& c, const std::string& op, const ExportNode& e,
                     std::vector<std::string> inputs, const std::vector<std::string>& outputs,
                     const std::vector<int64_t>& axes, const std::string& suffix = "") {
  const bool as_input =
      c.opset >= 13 && op != "ReduceMean" && op != "ReduceMax" && op != "ReduceMin";
  if (as_input && !axes.empty()) inputs.push_back(c.ints(e.name() + suffix + "_axes", axes));
  NodeProto* n = c.add(op, e.name() + suffix, inputs, outputs);
  if (!as_input && !axes.empty()) set_ints(n, "axes", axes);
  return n;
}

void unary(std::map<std::string, ExportRule>& r, const std::string& mx, const std::string& onnx) {
  r[mx] = [onnx](ExportContext& c, const ExportNode& e) {
    c.add(onnx, e.name(), {e.inputs[0]}, e.outputs);
  };
}

void binary(std::map<std::string, ExportRule>& r, const std::string& mx, const std::string& onnx) {
  r[mx] = [onnx](ExportContext& c, const ExportNode& e) {
    c.add(onnx, e.name(), {e.inputs[0], e.inputs[1]}, e.outputs);
  };
}

// x OP scalar, or scalar OP x when `reversed`.
void with_scalar(std::map<std::string, ExportRule>& r, const std::string& mx,
                 const std::string& onnx, bool reversed) {
  r[mx] = [onnx, reversed](ExportContext& c, const ExportNode& e) {
    std::string s = c.scalar(e.name() + "_scalar", static_cast<float>(e.number("scalar")));
    if (reversed)
      c.add(onnx, e.name(), {s, e.inputs[0]}, e.outputs);
    else
      c.add(onnx, e.name(), {e.inputs[0], s}, e.outputs);
  };
}

// MXNet's comparisons and logical operators give 1 or 0 in the input's
// type, ONNX's give BOOL: the ONNX node into a BOOL tensor (after Not for
// not_equal), then a Cast back to float. And/Or/Xor take BOOL operands: each
// is cast to BOOL first (nonzero is true, NaN too, as in MXNet).
struct LogicExport {
  const char* onnx;            // Equal, Greater, Less, GreaterOrEqual, LessOrEqual, And, Or, Xor
  bool bool_operands = false;  // And, Or, Xor
  bool negate = false;         // not_equal: Not(Equal)
  int min_opset = 11;          // GreaterOrEqual and LessOrEqual exist from opset 12
};

// The right operand: input 1, the node's `scalar`, or 0 (logical_not is x == 0).
enum class Rhs { kInput, kScalar, kZero };

void logic(std::map<std::string, ExportRule>& r, const std::string& mx, LogicExport how, Rhs rhs) {
  r[mx] = [how, rhs](ExportContext& c, const ExportNode& e) {
    if (c.opset < how.min_opset)
      throw UnsupportedExport(str(how.onnx, " needs opset ", how.min_opset, " or later"));
    std::vector<std::string> in = {e.inputs[0]};
    if (rhs == Rhs::kInput)
      in.push_back(e.inputs[1]);
    else
      in.push_back(c.scalar(e.name() + "_scalar",
                            rhs == Rhs::kZero ? 0.0f : static_cast<float>(e.number("scalar"))));
    if (how.bool_operands)
      for (std::string& x : in) {
        const std::string b = c.unique(x + "_bool");
        set_int(c.add("Cast", e.name() + "_to_bool", {x}, {b}), "to", ::onnx::TensorProto::BOOL);
        x = b;
      }
    std::string result = c.unique(e.name() + "_bool");
    c.add(how.onnx, e.name(), in, {result});
    if (how.negate) {
      const std::string negated = c.unique(e.name() + "_negated");
      c.add("Not", e.name() + "_not", {result}, {negated});
      result = negated;
    }
    set_int(c.add("Cast", e.name() + "_float", {result}, e.outputs), "to",
            ::onnx::TensorProto::FLOAT);
  };
}

void add_logic_rules(std::map<std::string, ExportRule>& r) {
  const std::vector<std::pair<const char*, LogicExport>> kinds = {
      {"equal", {"Equal"}},           {"not_equal", {"Equal", false, true}},
      {"greater", {"Greater"}},       {"greater_equal", {"GreaterOrEqual", false, false, 12}},
      {"lesser", {"Less"}},           {"lesser_equal", {"LessOrEqual", false, false, 12}},
      {"logical_and", {"And", true}}, {"logical_or", {"Or", true}},
      {"logical_xor", {"Xor", true}}};
  for (const auto& [kind, how] : kinds) {
    logic(r, str("_", kind), how, Rhs::kInput);
    logic(r, str("broadcast_", kind), how, Rhs::kInput);
    logic(r, str("_", kind, "_scalar"), how, Rhs::kScalar);
  }
  logic(r, "logical_not", {"Equal"}, Rhs::kZero);
}

void softmax_like(std::map<std::string, ExportRule>& r, const std::string& mx,
                  const std::string& onnx) {
  r[mx] = [onnx](ExportContext& c, const ExportNode& e) {
    const int nd = c.shape_of(e.inputs[0]).ndim();
    const int64_t axis = positive_axis(param_value::parse_int(e.get("axis")), nd);
    if (e.flag("use_length")) throw UnsupportedExport("use_length has no ONNX equivalent");
    if (c.opset < 13 && axis != nd - 1)
      throw UnsupportedExport(str("axis ", axis, " of a ", nd, "-D input needs opset 13 or later"));
    std::string in = e.inputs[0];
    std::string t = e.get("temperature");
    if (!is_none(t) && param_value::parse_double(t) != 1.0) {
      std::string scaled = c.unique(e.name() + "_scaled");
      c.add("Div", e.name() + "_temperature",
            {in, c.scalar(e.name() + "_t", static_cast<float>(param_value::parse_double(t)))},
            {scaled});
      in = scaled;
    }
    set_int(c.add(onnx, e.name(), {in}, e.outputs), "axis", axis);
  };
}

// The layers with weights and the nn family, one function per operator.

// The attributes Conv and ConvTranspose share, from either Params struct.
template <typename P>
void set_conv_window(NodeProto* n, const P& p) {
  const auto kernel = p.kernel.to_vector();
  set_ints(n, "kernel_shape", kernel);
  set_ints(n, "strides", dims(p.stride, kernel.size(), 1));
  set_ints(n, "dilations", dims(p.dilate, kernel.size(), 1));
  set_ints(n, "pads", twice(dims(p.pad, kernel.size(), 0)));
  set_int(n, "group", p.num_group);
}

void export_convolution(ExportContext& c, const ExportNode& e) {
  set_conv_window(c.add("Conv", e.name(), e.inputs, e.outputs), e.param<op::ConvolutionParam>());
}

void export_deconvolution(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::DeconvolutionParam>();
  if (p.target_shape.ndim() > 0)
    throw UnsupportedExport("target_shape is not exported (give pad and adj instead)");
  NodeProto* n = c.add("ConvTranspose", e.name(), e.inputs, e.outputs);
  set_conv_window(n, p);
  set_ints(n, "output_padding", dims(p.adj, static_cast<size_t>(p.kernel.ndim()), 0));
}

void export_fully_connected(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::FullyConnectedParam>();
  const int nd = c.shape_of(e.inputs[0]).ndim();
  const bool bias = !p.no_bias;
  if (p.flatten || nd == 2) {
    std::string in = e.inputs[0];
    if (nd != 2) {
      in = c.unique(e.name() + "_flat");
      set_int(c.add("Flatten", e.name() + "_flatten", {e.inputs[0]}, {in}), "axis", 1);
    }
    std::vector<std::string> inputs{in, e.inputs[1]};
    if (bias) inputs.push_back(e.inputs[2]);
    set_int(c.add("Gemm", e.name(), inputs, e.outputs), "transB", 1);
    return;
  }
  std::string wt = c.unique(e.name() + "_weight_t");
  c.add("Transpose", e.name() + "_transpose", {e.inputs[1]}, {wt});
  if (!bias) {
    c.add("MatMul", e.name(), {e.inputs[0], wt}, e.outputs);
    return;
  }
  std::string prod = c.unique(e.name() + "_matmul");
  c.add("MatMul", e.name() + "_matmul", {e.inputs[0], wt}, {prod});
  c.add("Add", e.name(), {prod, e.inputs[2]}, e.outputs);
}

void export_activation(ExportContext& c, const ExportNode& e) {
  const op::ActType type = e.param<op::ActivationParam>().act_type;
  c.add(op::activation_kind(type).onnx_op, e.name(), {e.inputs[0]}, e.outputs);
}

void export_leaky_relu(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::LeakyReLUParam>();
  switch (p.act_type) {
    case op::LeakyType::kLeaky:
      set_float(c.add("LeakyRelu", e.name(), {e.inputs[0]}, e.outputs), "alpha", p.slope);
      return;
    case op::LeakyType::kElu:
      set_float(c.add("Elu", e.name(), {e.inputs[0]}, e.outputs), "alpha", p.slope);
      return;
    case op::LeakyType::kSelu: c.add("Selu", e.name(), {e.inputs[0]}, e.outputs); return;
    case op::LeakyType::kPRelu: {
      // mx's gamma has one value per channel (axis 1); ONNX broadcasts from the right.
      const int nd = c.shape_of(e.inputs[0]).ndim();
      std::vector<int64_t> shape{-1};
      for (int i = 2; i < nd; ++i) shape.push_back(1);
      std::string slope_name = c.unique(e.name() + "_slope");
      c.add("Reshape", e.name() + "_reshape", {e.inputs[1], c.ints(e.name() + "_shape", shape)},
            {slope_name});
      c.add("PRelu", e.name(), {e.inputs[0], slope_name}, e.outputs);
      return;
    }
    case op::LeakyType::kRRelu:
    case op::LeakyType::kGelu: break;
  }
  throw UnsupportedExport("act_type '" + e.get("act_type") +
                          "' has no ONNX equivalent at opsets 11-17");
}

void export_batch_norm(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::BatchNormParam>();
  if (p.output_mean_var) throw UnsupportedExport("output_mean_var is not exported");
  const int nd = c.shape_of(e.inputs[0]).ndim();
  if (positive_axis(p.axis, nd) != 1) throw UnsupportedExport("ONNX normalizes over axis 1 only");
  std::vector<std::string> inputs = e.inputs;
  if (p.fix_gamma) {
    // mx uses a scale of 1 and ignores gamma's values.
    const Shape& g = c.shape_of(e.inputs[1]);
    auto* t = c.graph->add_initializer();
    t->set_name(c.unique(e.name() + "_fixed_gamma"));
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_dims(g.size());
    for (int64_t i = 0; i < g.size(); ++i) t->add_float_data(1.0f);
    inputs[1] = t->name();
  }
  NodeProto* n = c.add("BatchNormalization", e.name(), inputs, e.outputs);
  set_float(n, "epsilon", static_cast<float>(p.eps));
  set_float(n, "momentum", p.momentum);
}

void export_pooling(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::PoolingParam>();
  if (p.pool_type == op::PoolType::kSum)
    throw UnsupportedExport("pool_type 'sum' has no ONNX equivalent");
  const bool max = p.pool_type == op::PoolType::kMax;
  if (p.global_pool) {
    c.add(max ? "GlobalMaxPool" : "GlobalAveragePool", e.name(), {e.inputs[0]}, e.outputs);
    return;
  }
  const auto kernel = p.kernel.to_vector();
  NodeProto* n = c.add(max ? "MaxPool" : "AveragePool", e.name(), {e.inputs[0]}, e.outputs);
  set_ints(n, "kernel_shape", kernel);
  set_ints(n, "strides", dims(p.stride, kernel.size(), 1));
  set_ints(n, "pads", twice(dims(p.pad, kernel.size(), 0)));
  if (p.pooling_convention == op::PoolingConvention::kFull) set_int(n, "ceil_mode", 1);
  if (!max) set_int(n, "count_include_pad", p.count_include_pad.value_or(true) ? 1 : 0);
}

// Layers with weights and the nn family: Convolution, Deconvolution,
// FullyConnected, activations, BatchNorm, Pooling.
void add_layer_rules(std::map<std::string, ExportRule>& r) {
  r["Convolution"] = export_convolution;
  r["Deconvolution"] = export_deconvolution;
  r["FullyConnected"] = export_fully_connected;
  r["Activation"] = export_activation;
  r["LeakyReLU"] = export_leaky_relu;
  r["BatchNorm"] = export_batch_norm;
  r["Pooling"] = export_pooling;
}

// Flatten, Dropout, the output layers and softmax.
void add_output_rules(std::map<std::string, ExportRule>& r) {
  r["Flatten"] = [](ExportContext& c, const ExportNode& e) {
    set_int(c.add("Flatten", e.name(), {e.inputs[0]}, e.outputs), "axis", 1);
  };
  r["Dropout"] = [](ExportContext& c, const ExportNode& e) {
    if (e.get("mode") == "always")
      throw UnsupportedExport("mode 'always' (dropout at inference) is not exported");
    c.add("Identity", e.name(), {e.inputs[0]}, e.outputs);
  };
  r["SoftmaxOutput"] = [](ExportContext& c, const ExportNode& e) {
    const Shape& s = c.shape_of(e.inputs[0]);
    const int nd = s.ndim();
    if (e.flag("preserve_shape") || nd == 2) {
      set_int(c.add("Softmax", e.name(), {e.inputs[0]}, e.outputs), "axis", nd - 1);
    } else if (e.flag("multi_output")) {
      if (c.opset < 13) throw UnsupportedExport("multi_output needs opset 13 or later");
      set_int(c.add("Softmax", e.name(), {e.inputs[0]}, e.outputs), "axis", 1);
    } else if (c.opset < 13) {
      // Before opset 13 Softmax itself works on the input flattened after axis 1.
      set_int(c.add("Softmax", e.name(), {e.inputs[0]}, e.outputs), "axis", 1);
    } else {
      std::string flat = c.unique(e.name() + "_flat"), prob = c.unique(e.name() + "_prob");
      set_int(c.add("Flatten", e.name() + "_flatten", {e.inputs[0]}, {flat}), "axis", 1);
      set_int(c.add("Softmax", e.name() + "_softmax", {flat}, {prob}), "axis", 1);
      std::vector<int64_t> shape = s.to_vector();
      shape[0] = 0;
      c.add("Reshape", e.name(), {prob, c.ints(e.name() + "_shape", shape)}, e.outputs);
    }
  };
  for (const char* loss : {"LinearRegressionOutput", "MAERegressionOutput"})
    r[loss] = [](ExportContext& c, const ExportNode& e) {
      c.add("Identity", e.name(), {e.inputs[0]}, e.outputs);
    };
  r["LogisticRegressionOutput"] = [](ExportContext& c, const ExportNode& e) {
    c.add("Sigmoid", e.name(), {e.inputs[0]}, e.outputs);
  };
  softmax_like(r, "softmax", "Softmax");
  softmax_like(r, "log_softmax", "LogSoftmax");
}

// Concat and the element-wise arithmetic: sums, binary, unary and scalar forms, clip.
void add_elementwise_rules(std::map<std::string, ExportRule>& r) {
  r["Concat"] = [](ExportContext& c, const ExportNode& e) {
    set_int(c.add("Concat", e.name(), e.inputs, e.outputs), "axis",
            param_value::parse_int(e.get("dim")));
  };
  r["ElementWiseSum"] = [](ExportContext& c, const ExportNode& e) {
    c.add("Sum", e.name(), e.inputs, e.outputs);
  };
  for (auto [mx, onnx] :
       std::vector<std::pair<const char*, const char*>>{{"elemwise_add", "Add"},
                                                        {"elemwise_sub", "Sub"},
                                                        {"elemwise_mul", "Mul"},
                                                        {"elemwise_div", "Div"},
                                                        {"broadcast_add", "Add"},
                                                        {"broadcast_sub", "Sub"},
                                                        {"broadcast_mul", "Mul"},
                                                        {"broadcast_div", "Div"},
                                                        {"broadcast_maximum", "Max"},
                                                        {"broadcast_minimum", "Min"}})
    binary(r, mx, onnx);
  with_scalar(r, "_plus_scalar", "Add", false);
  with_scalar(r, "_minus_scalar", "Sub", false);
  with_scalar(r, "_rminus_scalar", "Sub", true);
  with_scalar(r, "_mul_scalar", "Mul", false);
  with_scalar(r, "_div_scalar", "Div", false);
  with_scalar(r, "_rdiv_scalar", "Div", true);
  with_scalar(r, "_power_scalar", "Pow", false);
  with_scalar(r, "_rpower_scalar", "Pow", true);
  with_scalar(r, "_maximum_scalar", "Max", false);
  with_scalar(r, "_minimum_scalar", "Min", false);
  add_logic_rules(r);
  for (auto [mx, onnx] :
       std::vector<std::pair<const char*, const char*>>{{"relu", "Relu"},
                                                        {"sigmoid", "Sigmoid"},
                                                        {"tanh", "Tanh"},
                                                        {"exp", "Exp"},
                                                        {"erf", "Erf"},
                                                        {"log", "Log"},
                                                        {"sqrt", "Sqrt"},
                                                        {"abs", "Abs"},
                                                        {"negative", "Neg"},
                                                        {"reciprocal", "Reciprocal"},
                                                        {"_copy", "Identity"},
                                                        {"BlockGrad", "Identity"}})
    unary(r, mx, onnx);
  r["square"] = [](ExportContext& c, const ExportNode& e) {
    c.add("Mul", e.name(), {e.inputs[0], e.inputs[0]}, e.outputs);
  };
  r["clip"] = [](ExportContext& c, const ExportNode& e) {
    c.add("Clip", e.name(),
          {e.inputs[0], c.scalar(e.name() + "_min", static_cast<float>(e.number("a_min"))),
           c.scalar(e.name() + "_max", static_cast<float>(e.number("a_max")))},
          e.outputs);
  };
}

// Shapes and reductions.
void add_tensor_rules(std::map<std::string, ExportRule>& r) {
  r["Reshape"] = [](ExportContext& c, const ExportNode& e) {
    std::string spec = e.get("shape");
    // MXNet's codes (-2, -3, -4 too), not a Shape: dimensions below -1 are codes here.
    const std::vector<int64_t> codes =
        is_none(spec) ? std::vector<int64_t>{}
                      : parse_int_tuple(spec, {"shape", "dimension", true, true});
    bool direct = !codes.empty() && !e.flag("reverse");
    for (int64_t d : codes) direct = direct && d >= -1;
    std::vector<int64_t> target;
    if (direct) {
      target = codes;  // 0 and -1 mean the same in ONNX
    } else {
      const Shape& in = c.shape_of(e.inputs[0]);
      target = c.shape_of(e.outputs[0]).to_vector();
      if (!target.empty() && in.ndim() > 0 && target[0] == in[0]) target[0] = 0;  // the batch
    }
    c.add("Reshape", e.name(), {e.inputs[0], c.ints(e.name() + "_shape", target)}, e.outputs);
  };
  r["transpose"] = [](ExportContext& c, const ExportNode& e) {
    NodeProto* n = c.add("Transpose", e.name(), {e.inputs[0]}, e.outputs);
    std::string axes = e.get("axes");
    if (!is_none(axes) && Shape::parse(axes).ndim() > 0)
      set_ints(n, "perm", Shape::parse(axes).to_vector());
  };
  r["SwapAxis"] = [](ExportContext& c, const ExportNode& e) {
    const int nd = c.shape_of(e.inputs[0]).ndim();
    std::vector<int64_t> perm(static_cast<size_t>(nd));
    for (int i = 0; i < nd; ++i) perm[static_cast<size_t>(i)] = i;
    const int64_t a = positive_axis(param_value::parse_int(e.get("dim1")), nd),
                  b = positive_axis(param_value::parse_int(e.get("dim2")), nd);
    std::swap(perm[static_cast<size_t>(a)], perm[static_cast<size_t>(b)]);
    set_ints(c.add("Transpose", e.name(), {e.inputs[0]}, e.outputs), "perm", perm);
  };
  r["squeeze"] = [](ExportContext& c, const ExportNode& e) {
    // Without axes MXNet squeezes every axis of size 1, which for an
    // exported model would include a batch of 1: the axes must be given.
    const std::string spec = e.get("axis");
    if (is_none(spec)) throw UnsupportedExport("squeeze without an axis depends on the batch size");
    const int nd = c.shape_of(e.inputs[0]).ndim();
    std::vector<int64_t> axes;
    for (int64_t a : Shape::parse(spec)) axes.push_back(positive_axis(a, nd));
    with_axes(c, "Squeeze", e, {e.inputs[0]}, e.outputs, axes);
  };
  r["expand_dims"] = [](ExportContext& c, const ExportNode& e) {
    const int nd = c.shape_of(e.inputs[0]).ndim();
    with_axes(c, "Unsqueeze", e, {e.inputs[0]}, e.outputs,
              {positive_axis(param_value::parse_int(e.get("axis")), nd + 1)});
  };
  for (auto [mx, onnx] : std::vector<std::pair<const char*, const char*>>{{"sum", "ReduceSum"},
                                                                          {"mean", "ReduceMean"},
                                                                          {"max", "ReduceMax"},
                                                                          {"min", "ReduceMin"}})
    r[mx] = [onnx = std::string(onnx)](ExportContext& c, const ExportNode& e) {
      const int nd = c.shape_of(e.inputs[0]).ndim();
      std::string spec = e.get("axis");
      std::vector<int64_t> axes;
      if (!is_none(spec))
        for (int64_t a : Shape::parse(spec)) axes.push_back(positive_axis(a, nd));
      if (e.flag("exclude")) {
        std::vector<int64_t> rest;
        for (int64_t a = 0; a < nd; ++a)
          if (std::find(axes.begin(), axes.end(), a) == axes.end()) rest.push_back(a);
        if (rest.empty()) {  // nothing reduced
          c.add("Identity", e.name(), {e.inputs[0]}, e.outputs);
          return;
        }
        axes = rest;
      }
      set_int(with_axes(c, onnx, e, {e.inputs[0]}, e.outputs, axes), "keepdims",
              e.flag("keepdims") ? 1 : 0);
    };
}

// Products, LRN, slices, Cast, Embedding, argmax.
void add_product_and_index_rules(std::map<std::string, ExportRule>& r) {
  auto matmul = [](ExportContext& c, const ExportNode& e, bool batch) {
    std::vector<std::string> in{e.inputs[0], e.inputs[1]};
    for (int k = 0; k < 2; ++k) {
      if (!e.flag(k == 0 ? "transpose_a" : "transpose_b")) continue;
      const int nd = c.shape_of(in[static_cast<size_t>(k)]).ndim();
      if (!batch && nd != 2) throw UnsupportedExport("transposed operands must be 2-D");
      std::vector<int64_t> perm;
      for (int i = 0; i < nd; ++i) perm.push_back(i);
      std::swap(perm[static_cast<size_t>(nd - 1)], perm[static_cast<size_t>(nd - 2)]);
      std::string t = c.unique(e.name() + (k == 0 ? "_lhs_t" : "_rhs_t"));
      set_ints(c.add("Transpose", e.name() + "_transpose", {in[static_cast<size_t>(k)]}, {t}),
               "perm", perm);
      in[static_cast<size_t>(k)] = t;
    }
    if (!batch && c.shape_of(e.inputs[1]).ndim() > 2)
      throw UnsupportedExport("dot with an N-D right operand has no MatMul equivalent");
    c.add("MatMul", e.name(), in, e.outputs);
  };
  r["dot"] = [matmul](ExportContext& c, const ExportNode& e) { matmul(c, e, false); };
  r["batch_dot"] = [matmul](ExportContext& c, const ExportNode& e) { matmul(c, e, true); };
  r["LRN"] = [](ExportContext& c, const ExportNode& e) {
    NodeProto* n = c.add("LRN", e.name(), {e.inputs[0]}, e.outputs);
    set_int(n, "size", param_value::parse_int(e.get("nsize")));
    set_float(n, "alpha", static_cast<float>(e.number("alpha")));
    set_float(n, "beta", static_cast<float>(e.number("beta")));
    set_float(n, "bias", static_cast<float>(e.number("knorm")));
  };
  r["slice_axis"] = [](ExportContext& c, const ExportNode& e) {
    const int64_t axis = param_value::parse_int(e.get("axis"));
    const std::string end = e.get("end");
    const int64_t stop =
        is_none(end) ? std::numeric_limits<int64_t>::max() : param_value::parse_int(end);
    c.add("Slice", e.name(),
          {e.inputs[0], c.ints(e.name() + "_starts", {param_value::parse_int(e.get("begin"))}),
           c.ints(e.name() + "_ends", {stop}), c.ints(e.name() + "_axes", {axis})},
          e.outputs);
  };
  r["SliceChannel"] = [](ExportContext& c, const ExportNode& e) {
    const int64_t axis = param_value::parse_int(e.get("axis"));
    if (!e.flag("squeeze_axis")) {
      set_int(c.add("Split", e.name(), {e.inputs[0]}, e.outputs), "axis", axis);
      return;
    }
    const int nd = c.shape_of(e.inputs[0]).ndim();
    std::vector<std::string> parts;
    for (const auto& o : e.outputs) parts.push_back(c.unique(o + "_unsqueezed"));
    set_int(c.add("Split", e.name(), {e.inputs[0]}, parts), "axis", axis);
    for (size_t i = 0; i < parts.size(); ++i)
      with_axes(c, "Squeeze", e, {parts[i]}, {e.outputs[i]}, {positive_axis(axis, nd)},
                str("_squeeze", i));
  };
  r["Cast"] = [](ExportContext& c, const ExportNode& e) {
    DType to = DType::kFloat32;
    bool found = false;
    for (DType d : kAllDTypes)
      if (e.get("dtype") == dtype_name(d)) {
        to = d;
        found = true;
      }
    if (!found) throw UnsupportedExport("dtype '" + e.get("dtype") + "' is not exported");
    set_int(c.add("Cast", e.name(), {e.inputs[0]}, e.outputs), "to", dtype_to_onnx(to));
  };
  r["QuantizeLinear"] = [](ExportContext& c, const ExportNode& e) {
    std::vector<std::string> in = e.inputs;
    // Per tensor: ONNX's scalars, where mx holds 1-element arrays; stored
    // ones written as scalar initializers, computed ones reshaped.
    if (c.shape_of(in[1]).size() == 1) {
      for (size_t k : {1, 2}) {
        if (const NDArray* stored = c.array(in[k])) {
          in[k] = c.initializer(in[k] + "_scalar", *stored);
          c.graph->mutable_initializer(c.graph->initializer_size() - 1)->clear_dims();
        } else {
          const std::string reshaped = c.unique(in[k] + "_scalar");
          c.add("Reshape", e.name() + "_scalar" + std::to_string(k),
                {in[k], c.ints(e.name() + "_scalar_shape", {})}, {reshaped});
          in[k] = reshaped;
        }
      }
    }
    set_int(c.add("QuantizeLinear", e.name(), in, e.outputs), "axis",
            param_value::parse_int(e.get("axis")));
  };
  r["Embedding"] = [](ExportContext& c, const ExportNode& e) {
    std::string idx = c.unique(e.name() + "_indices");
    set_int(c.add("Cast", e.name() + "_cast", {e.inputs[0]}, {idx}), "to",
            ::onnx::TensorProto::INT64);
    set_int(c.add("Gather", e.name(), {e.inputs[1], idx}, e.outputs), "axis", 0);
  };
  r["argmax"] = [](ExportContext& c, const ExportNode& e) {
    if (is_none(e.get("axis"))) throw UnsupportedExport("argmax without an axis is not exported");
    std::string idx = c.unique(e.name() + "_index");
    NodeProto* n = c.add("ArgMax", e.name() + "_argmax", {e.inputs[0]}, {idx});
    set_int(n, "axis", param_value::parse_int(e.get("axis")));
    set_int(n, "keepdims", e.flag("keepdims") ? 1 : 0);
    set_int(c.add("Cast", e.name(), {idx}, e.outputs), "to", ::onnx::TensorProto::FLOAT);
  };
}

std::map<std::string, ExportRule> make_rules() {
  std::map<std::string, ExportRule> r;
  add_layer_rules(r);
  add_output_rules(r);
  add_elementwise_rules(r);
  add_tensor_rules(r);
  add_product_and_index_rules(r);
  return r;
}

}  // namespace

const std::map<std::string, ExportRule>& export_rules() {
  static const std::map<std::string, ExportRule> rules = [] {
    auto r = make_rules();
    add_sequence_export_rules(r);
    return r;
  }();
  return rules;
}

}  // namespace mx::onnx
