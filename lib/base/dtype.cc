#include "base/dtype.h"

namespace mx {

bool is_valid_dtype_flag(int32_t flag) {
  for (DType d : kAllDTypes)
    if (static_cast<int32_t>(d) == flag) return true;
  return false;
}

size_t dtype_size(DType dtype) {
  return dispatch_dtype(dtype, [](auto tag) { return sizeof(typename decltype(tag)::type); });
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kFloat16: return "float16";
    case DType::kUint8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt8: return "int8";
    case DType::kInt64: return "int64";
    case DType::kBFloat16: return "bfloat16";
  }
  return "invalid";
}

DType parse_dtype(const std::string& name) {
  for (DType dtype : kAllDTypes)
    if (name == dtype_name(dtype)) return dtype;
  throw InputError("unknown dtype '" + name +
                   "' (expected float32, float64, float16, uint8, int32, int8, int64 or bfloat16)");
}

bool is_floating(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat64 || dtype == DType::kFloat16 ||
         dtype == DType::kBFloat16;
}

}  // namespace mx
