// Export of an mx network (a Symbol with its argument and auxiliary arrays)
// to an ONNX model: weights and BatchNorm's moving statistics become
// initializers, the batch dimension of each input is symbolic ("N"), and
// the model carries a doc string naming its source.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "ndarray/ndarray.h"

namespace mx::onnx {

inline constexpr int kDefaultOpset = 13;
inline constexpr int kMinExportOpset = 11;
inline constexpr int kMaxExportOpset = 17;

struct ExportOptions {
  int opset = kDefaultOpset;
  // Shape of every input (the variables without an array), batch first.
  std::map<std::string, Shape> input_shapes;
  bool dynamic_batch = true;
  std::string doc;  // the model's doc string (e.g. the checkpoint it came from)
};

// Throws InputError for an opset outside [11, 17], for an input without a
// shape, and — listing every one, by node name and operator — for operators
// or parameter values with no ONNX equivalent.
::onnx::ModelProto export_model(const graph::Symbol& symbol,
                                const std::map<std::string, NDArray>& args,
                                const std::map<std::string, NDArray>& aux,
                                const ExportOptions& options);

// export_model, checked by onnx::checker and written atomically to `path`.
void export_model_file(const std::string& path, const graph::Symbol& symbol,
                       const std::map<std::string, NDArray>& args,
                       const std::map<std::string, NDArray>& aux, const ExportOptions& options);

// The mx operators export knows, for docs and tests.
std::vector<std::string> exportable_operators();
// The registry's operators export refuses, with the reason (unexported_ops.cc).
const std::map<std::string, std::string>& unexported_operators();

}  // namespace mx::onnx
