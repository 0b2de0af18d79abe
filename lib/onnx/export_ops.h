// Per-operator export rules (internal to lib/onnx): each mx operator maps to
// one or more ONNX nodes written through an ExportContext.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/shape.h"
#include "graph/node.h"
#include "ndarray/ndarray.h"

namespace mx::onnx {

// An mx parameter value or structure ONNX cannot express at this opset.
class UnsupportedExport : public InputError {
 public:
  using InputError::InputError;
};

struct ExportContext {
  ::onnx::GraphProto* graph = nullptr;
  int opset = 13;
  // Inferred shape of each entry, by ONNX tensor name (batch of 1).
  std::map<std::string, Shape> shapes;

  // A node writing `outputs`; named `name`.
  ::onnx::NodeProto* add(const std::string& op_type, const std::string& name,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs);
  // Constant initializers; returns their name (`name` made unique).
  std::string ints(const std::string& name, const std::vector<int64_t>& values);
  std::string scalar(const std::string& name, float value);
  // An initializer holding `value` (any type); returns its name.
  std::string initializer(const std::string& name, const NDArray& value);
  std::string unique(const std::string& name);
  const Shape& shape_of(const std::string& tensor) const;
  // The stored array of a variable (a checkpoint's parameter or auxiliary
  // state), or null where `tensor` is not one: rules that must rewrite
  // weights (RNN's flat vector into ONNX's W, R, B) read them here.
  const NDArray* array(const std::string& tensor) const;

  const std::map<std::string, NDArray>* args = nullptr;
  const std::map<std::string, NDArray>* aux = nullptr;

 private:
  std::map<std::string, int> used_;
};

// The node's parameters as printed by the operator (defaults included).
struct ExportNode {
  const graph::Node& node;
  std::map<std::string, std::string> params;
  std::vector<std::string> inputs;   // ONNX tensor names of the node's inputs (aux included)
  std::vector<std::string> outputs;  // of its visible outputs
  const std::string& name() const { return node.name; }
  std::string get(const std::string& key) const;
  // Typed reads of the printed parameters ("None" or absent: unset).
  bool is_set(const std::string& key) const;
  bool flag(const std::string& key) const;  // false when unset
  double number(const std::string& key) const;
  // The operator's parameters typed, for operators whose Params struct is in
  // a header (op/nn/*_param.h); the others are read through the printed
  // strings above.
  template <typename P>
  const P& param() const {
    return node.op->params_as<P>();
  }
};

using ExportRule = std::function<void(ExportContext&, const ExportNode&)>;
const std::map<std::string, ExportRule>& export_rules();

// Attribute helpers.
void set_ints(::onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& values);
void set_int(::onnx::NodeProto* n, const std::string& name, int64_t value);
void set_float(::onnx::NodeProto* n, const std::string& name, float value);
void set_string(::onnx::NodeProto* n, const std::string& name, const std::string& value);
void set_strings(::onnx::NodeProto* n, const std::string& name,
                 const std::vector<std::string>& values);

// Rules of the sequence operators (export_sequence.cc): RNN, LayerNorm and
// the interleaved self-attention products.
void add_sequence_export_rules(std::map<std::string, ExportRule>& rules);

}  // namespace mx::onnx
