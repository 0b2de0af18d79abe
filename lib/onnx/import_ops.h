// Per-operator import rules (internal to lib/onnx): each ONNX operator
// becomes registry operators through an ImportContext that knows the
// tensors built so far, the constant values and static shapes.
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "ndarray/ndarray.h"
#include "onnx/import.h"

namespace mx::onnx {

// How a tensor is quantized (QuantizeLinear, DequantizeLinear and the
// QLinear operators): real = (stored - zero_point) * scale, per tensor (one
// value each) or per slice along `axis`.
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  DType type = DType::kUint8;  // of the stored values: uint8, int8 (int32 for a bias)
  int64_t axis = 1;
  bool per_tensor() const { return scale.size() == 1; }
  bool operator==(const Quantization& o) const {
    return scale == o.scale && zero_point == o.zero_point && type == o.type &&
           (per_tensor() || axis == o.axis);
  }
};

class ImportContext {
 public:
  int opset = 0;
  std::map<std::string, graph::Symbol> tensors;  // ONNX tensor name -> mx output
  std::map<std::string, NDArray> constants;      // initializers, Constant outputs, fixed inputs
  std::map<std::string, DType> input_dtypes;     // graph inputs
  graph::ShapeMap input_shapes;                  // graph inputs (-1 where symbolic)
  std::map<std::string, NDArray> args, aux;      // arrays of the variables made from constants
  // ONNX BOOL tensors (comparison results), held as float32 1 and 0 as
  // MXNet's comparison operators give them. They may only go into operators
  // whose rule takes them (ImportOp::takes_booleans), never a graph output.
  std::set<std::string> booleans;
  // Quantized (integer) tensors that QuantizeLinear and the QLinear
  // operators make: `tensors` holds their real values in float32, as mx
  // computes them; they may only go into operators whose rule takes them
  // (ImportOp::takes_quantized, keeps_quantization), or a graph output
  // (quantized again there: import.cc, quantized_output).
  std::map<std::string, Quantization> quantized;
  // Float tensors that are DequantizeLinear(QuantizeLinear(x)) (QDQ): read
  // quantized so by their consumers.
  std::map<std::string, Quantization> requantized;
  // Constants that DequantizeLinear made of integer initializers (weights).
  std::map<std::string, Quantization> dequantized_constants;
  // The mx name of a constant's variable where it is not its ONNX name.
  std::map<std::string, std::string> variable_names;
  // Every tensor name the ONNX graph uses (made names must avoid them).
  std::set<std::string> onnx_names;
  // What the import maps only approximately or not at all (int8 layers left
  // in float32, ranges mx holds differently), for the caller to show.
  std::vector<std::string> warnings;

  // The mx symbol of tensor `name`; a constant becomes a variable (an
  // argument, or an auxiliary state with `as_aux`).
  graph::Symbol get(const std::string& name, bool as_aux = false);
  const NDArray* constant(const std::string& name) const;
  // Static shape of a tensor: -1 for dimensions that depend on a symbolic one.
  Shape shape(const std::string& name);
  int rank(const std::string& name);
  DType dtype(const std::string& name) const;
  // A node name not used yet.
  std::string unique(const std::string& name);
  graph::Symbol op(const std::string& op, const std::string& name,
                   const std::map<std::string, std::string>& attrs,
                   const std::vector<graph::Symbol>& inputs);

 private:
  std::set<std::string> names_;
  std::map<std::string, Shape> shape_cache_;
};

// One ONNX node with attribute accessors.
struct ImportNode {
  const ::onnx::NodeProto& proto;
  std::string name;  // unique mx node name

  bool has(const std::string& attr) const;
  int64_t i(const std::string& attr, int64_t fallback) const;
  float f(const std::string& attr, float fallback) const;
  std::string s(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> ints(const std::string& attr) const;
  const ::onnx::AttributeProto* attr(const std::string& name) const;
  // Input k, or "" when absent or empty (an omitted optional input).
  std::string input(int k) const;
  int num_outputs_used() const;  // outputs with a name
};

// Throws UnsupportedModel; the driver adds the node's name.
[[noreturn]] void unsupported(const std::string& what);

// Returns one symbol per ONNX output it supports (output 0 first).
using ImportRule = std::function<std::vector<graph::Symbol>(ImportContext&, const ImportNode&)>;
struct ImportOp {
  ImportRule rule;
  // Inputs read as constants (attributes in disguise) or of any element
  // type (Gather's indices); the others must be float32.
  std::set<int> non_float_inputs;
  // And, Or, Xor, Not and Cast: operands may be ImportContext::booleans.
  bool takes_booleans = false;
  // DequantizeLinear and the QLinear operators: operands may be
  // ImportContext::quantized.
  bool takes_quantized = false;
  // MaxPool, Reshape, Flatten, ...: commute with dequantization, so a
  // quantized input 0 gives outputs quantized alike.
  bool keeps_quantization = false;
};
const std::map<std::string, ImportOp>& import_rules();

// Rules of the sequence operators (import_sequence.cc): LSTM, GRU, RNN and
// LayerNormalization.
void add_sequence_import_rules(std::map<std::string, ImportOp>& rules);

// Rules of the quantized operators (import_quantized.cc): QuantizeLinear,
// DequantizeLinear, QLinearConv, QLinearMatMul, and ONNX Runtime's
// com.microsoft QLinearAdd and QLinearGlobalAveragePool (keyed
// "com.microsoft.NAME"). They also mark the operators that keep a quantized
// input's quantization.
void add_quantized_import_rules(std::map<std::string, ImportOp>& rules);

// The float rules on named tensors, for the quantized operators: Conv or
// ConvTranspose of (data, weight, bias; "" for none), MatMul, and Add, Sub,
// Mul, Div, Pow ("add", "sub", ...) with ONNX's broadcasting.
std::vector<graph::Symbol> import_conv(ImportContext& c, const ImportNode& n, bool transposed,
                                       const std::array<std::string, 3>& inputs);
std::vector<graph::Symbol> import_matmul(ImportContext& c, const ImportNode& n,
                                         const std::string& a, const std::string& b);
std::vector<graph::Symbol> import_arithmetic(ImportContext& c, const ImportNode& n,
                                             const std::string& op, const std::string& x,
                                             const std::string& y);
// After the Conv rule (and the Gemm rule, when it made a FullyConnected):
// marks `conv` int8 (graph/quantize_marks.h) when its
// data is DequantizeLinear(QuantizeLinear(x)) and its weights a
// DequantizeLinear of int8 values with zero point 0; where only one of
// them is, says in a warning why it stays float32.
void mark_int8_layer(ImportContext& c, const ImportNode& n, const graph::Symbol& conv);

}  // namespace mx::onnx
