// Reading and writing ONNX model files: a parse failure, a file too large or
// an invalid model is an InputError naming the file; writes go to a
// temporary name renamed into place.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace mx::onnx {

// Parses `bytes` as a ModelProto and runs onnx::checker::check_model on it;
// `source` names the input in errors.
::onnx::ModelProto parse_model(const std::string& bytes, const std::string& source);
::onnx::ModelProto read_model(const std::string& path);

// The bytes of a protobuf file (a model or a tensor); an InputError naming
// it when it is over protobuf's 2 GiB limit or cannot be read.
std::string read_protobuf_file(const std::string& path);

// Checks the model with onnx::checker (Error on failure: mx built it) and
// writes it atomically.
void write_model(const std::string& path, const ::onnx::ModelProto& model);

}  // namespace mx::onnx
