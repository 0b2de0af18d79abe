// Conversions between ONNX TensorProtos and NDArrays: ONNX element types to
// mx dtypes and back, with every size checked against the data before
// memory is taken (tensors come from files users receive from elsewhere).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "ndarray/ndarray.h"

namespace mx::onnx {

// The mx dtype of an ONNX element type (BOOL reads as uint8), or nullopt
// for types mx lacks (strings, unsigned 16/32/64-bit, complex, bfloat16).
std::optional<DType> dtype_from_onnx(int32_t elem_type);
int32_t dtype_to_onnx(DType dtype);
// "FLOAT", "INT64", ... for messages.
std::string onnx_type_name(int32_t elem_type);

// The tensor's values as a CPU array. `owner` names the tensor in errors
// (InputError for inconsistent sizes, unsupported types or external data).
NDArray tensor_to_array(const ::onnx::TensorProto& tensor, const std::string& owner);
// Writes `array` (waits for it) as raw little-endian data.
void array_to_tensor(const NDArray& array, const std::string& name, ::onnx::TensorProto* tensor);

// Reads a serialized TensorProto file (the input_N.pb / output_N.pb of
// ONNX's test data); InputError naming the file when it is not one.
::onnx::TensorProto read_tensor_file(const std::string& path);

}  // namespace mx::onnx
