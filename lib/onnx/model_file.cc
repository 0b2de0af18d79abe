#include "onnx/model_file.h"

#include <onnx/checker.h>

#include <limits>

#include "base/error.h"
#include "base/file_util.h"

namespace mx::onnx {

::onnx::ModelProto parse_model(const std::string& bytes, const std::string& source) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    throw InputError(source + ": larger than 2 GiB, protobuf's limit");
  ::onnx::ModelProto model;
  if (bytes.empty() || !model.ParseFromString(bytes))
    throw InputError(source + ": not an ONNX model (the protobuf does not parse; truncated?)");
  if (!model.has_graph()) throw InputError(source + ": not an ONNX model (no graph)");
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    throw InputError(source + ": invalid ONNX model: " + what);
  }
  return model;
}

std::string read_protobuf_file(const std::string& path) {
  const uint64_t size = file_size(path);
  if (size > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    throw InputError(path + ": larger than 2 GiB, protobuf's limit");
  return read_file(path);
}

::onnx::ModelProto read_model(const std::string& path) {
  return parse_model(read_protobuf_file(path), path);
}

void write_model(const std::string& path, const ::onnx::ModelProto& model) {
  try {
    ::onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(path + ": the exported model fails onnx::checker: " + std::string(e.what()));
  }
  write_file_atomically(path, [&](std::ostream& out) {
    if (!model.SerializeToOstream(&out)) throw Error(path + ": cannot serialize the model");
  });
}

}  // namespace mx::onnx
