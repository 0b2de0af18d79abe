// Import of an ONNX model as an mx network: the graph becomes a Symbol of
// the registry's operators, initializers and Constant nodes become arrays.
// Every operator is checked before anything is built: the unsupported ones
// are listed together, with their node names.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "ndarray/ndarray.h"

namespace mx::onnx {

// Opsets of the default domain that import accepts.
inline constexpr int kMinImportOpset = 1;
inline constexpr int kMaxImportOpset = 17;

struct ImportedInput {
  std::string name;
  Shape shape;  // -1 for a symbolic or unknown dimension (e.g. the batch)
  DType dtype = DType::kFloat32;
};

struct ImportedModel {
  graph::Symbol symbol;
  std::map<std::string, NDArray> args;  // initializers read as arguments
  std::map<std::string, NDArray> aux;   // BatchNorm statistics
  std::vector<ImportedInput> inputs;    // the graph inputs that stay inputs
  // The ONNX names of the graph outputs, in the order of symbol's outputs.
  std::vector<std::string> output_names;
  int opset = 0;
  // What a quantized model's import maps only approximately, or not (a
  // layer left in float32 and why), naming the file and node.
  std::vector<std::string> warnings;
};

struct ImportOptions {
  // Values for graph inputs that are fixed for this model. An operator that
  // needs a constant operand (Reshape's shape, Squeeze's axes, Clip's
  // bounds, ...) may read one from here as from an initializer; other
  // inputs stay inputs.
  std::map<std::string, NDArray> input_values;
};

// A valid ONNX model that uses an operator, or an attribute value, that mx
// cannot run. InputError: exit code 2.
class UnsupportedModel : public InputError {
 public:
  using InputError::InputError;
};

// Reads, checks (onnx::checker) and imports `path`. Malformed files and
// unsupported operators throw InputError naming the file.
ImportedModel import_model(const std::string& path, const ImportOptions& options = {});
ImportedModel import_model(const ::onnx::ModelProto& model, const std::string& source,
                           const ImportOptions& options = {});

// The ONNX operators import maps, for docs and the conformance test.
std::vector<std::string> importable_operators();

}  // namespace mx::onnx
