#include "onnx/tensor_proto.h"

#include <cstring>
#include <limits>

#include "base/error.h"
#include "onnx/model_file.h"

namespace mx::onnx {
using ::onnx::TensorProto;

std::optional<DType> dtype_from_onnx(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT: return DType::kFloat32;
    case TensorProto::DOUBLE: return DType::kFloat64;
    case TensorProto::FLOAT16: return DType::kFloat16;
    case TensorProto::UINT8: return DType::kUint8;
    case TensorProto::BOOL: return DType::kUint8;  // mx has no bool type: 0 and 1
    case TensorProto::INT8: return DType::kInt8;
    case TensorProto::INT32: return DType::kInt32;
    case TensorProto::INT64: return DType::kInt64;
    default: return std::nullopt;
  }
}

int32_t dtype_to_onnx(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return TensorProto::FLOAT;
    case DType::kFloat64: return TensorProto::DOUBLE;
    case DType::kFloat16: return TensorProto::FLOAT16;
    case DType::kUint8: return TensorProto::UINT8;
    case DType::kInt8: return TensorProto::INT8;
    case DType::kInt32: return TensorProto::INT32;
    case DType::kInt64: return TensorProto::INT64;
    case DType::kBFloat16: return TensorProto::BFLOAT16;
  }
  return TensorProto::UNDEFINED;
}

std::string onnx_type_name(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type));
  return str("type ", elem_type);
}

namespace {

// Copies `count` typed values from a repeated field into `dst` of type T.
template <typename T, typename Field>
void copy_field(const Field& field, void* dst, int64_t count) {
  T* out = static_cast<T*>(dst);
  for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(field.Get(static_cast<int>(i)));
}

}  // namespace

NDArray tensor_to_array(const TensorProto& tensor, const std::string& owner) {
  if (tensor.data_location() == TensorProto::EXTERNAL || tensor.external_data_size() > 0)
    throw InputError(owner + ": tensor data in external files is not supported");
  if (tensor.has_segment()) throw InputError(owner + ": segmented tensors are not supported");
  auto dtype = dtype_from_onnx(tensor.data_type());
  if (!dtype)
    throw InputError(str(owner, ": element type ", onnx_type_name(tensor.data_type()),
                         " is not supported (float, double, float16, int8, uint8, int32, int64)"));
  if (tensor.dims_size() > Shape::kMaxNdim)
    throw InputError(str(owner, ": ", tensor.dims_size(), " dimensions (at most ", Shape::kMaxNdim,
                         " supported)"));
  std::vector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0) throw InputError(str(owner, ": negative dimension ", d));
    if (d > 0 && count > std::numeric_limits<int64_t>::max() / d)
      throw InputError(str(owner, ": the dimensions overflow"));
    count *= d;
    dims.push_back(d);
  }
  const size_t elem = dtype_size(*dtype);
  // How many values the typed field holds, to compare with `count` before allocating.
  int64_t stored = 0;
  const bool raw = tensor.has_raw_data();
  if (raw) {
    if (tensor.raw_data().size() % elem != 0 ||
        static_cast<int64_t>(tensor.raw_data().size() / elem) != count)
      throw InputError(str(owner, ": raw data has ", tensor.raw_data().size(), " bytes but ", count,
                           " elements of ", elem, " bytes were declared"));
    stored = count;
  } else {
    switch (*dtype) {
      case DType::kFloat32: stored = tensor.float_data_size(); break;
      case DType::kFloat64: stored = tensor.double_data_size(); break;
      case DType::kInt64: stored = tensor.int64_data_size(); break;
      default: stored = tensor.int32_data_size(); break;
    }
    if (stored != count)
      throw InputError(str(owner, ": ", stored, " values stored but ", count, " declared"));
  }
  NDArray array(Shape(dims), Context::cpu(), *dtype);
  array.wait_to_read();
  void* dst = array.raw_data();
  if (count == 0) return array;
  if (raw) {
    std::memcpy(dst, tensor.raw_data().data(), static_cast<size_t>(count) * elem);
    return array;
  }
  switch (*dtype) {
    case DType::kFloat32: copy_field<float>(tensor.float_data(), dst, count); break;
    case DType::kFloat64: copy_field<double>(tensor.double_data(), dst, count); break;
    case DType::kInt64: copy_field<int64_t>(tensor.int64_data(), dst, count); break;
    case DType::kInt32: copy_field<int32_t>(tensor.int32_data(), dst, count); break;
    case DType::kInt8: copy_field<int8_t>(tensor.int32_data(), dst, count); break;
    case DType::kUint8: copy_field<uint8_t>(tensor.int32_data(), dst, count); break;
    case DType::kFloat16:
    case DType::kBFloat16: copy_field<uint16_t>(tensor.int32_data(), dst, count); break;
  }
  return array;
}

void array_to_tensor(const NDArray& array, const std::string& name, TensorProto* tensor) {
  tensor->set_name(name);
  tensor->set_data_type(dtype_to_onnx(array.dtype()));
  for (int64_t d : array.shape()) tensor->add_dims(d);
  array.wait_to_read();
  tensor->set_raw_data(std::string(static_cast<const char*>(array.raw_data()), array.bytes()));
}

TensorProto read_tensor_file(const std::string& path) {
  TensorProto tensor;
  if (!tensor.ParseFromString(read_protobuf_file(path)))
    throw InputError(path + ": not a serialized ONNX TensorProto");
  return tensor;
}

}  // namespace mx::onnx
