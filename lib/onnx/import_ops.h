// Per-operator import rules (internal to lib/onnx): each ONNX operator
// becomes registry operators through an ImportContext that knows the
// tensors built so far, the constant values and static shapes.
#pragma once

#include <onnx/onnx_pb.h>

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
};
const std::map<std::string, ImportOp>& import_rules();

// Rules of the sequence operators (import_sequence.cc): LSTM, GRU, RNN and
// LayerNormalization.
void add_sequence_import_rules(std::map<std::string, ImportOp>& rules);

}  // namespace mx::onnx
