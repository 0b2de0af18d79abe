// Element types, numbered with MXNet's type flags (they are written into
// .params files), and dispatch from a runtime DType to a C++ type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "base/bfloat16.h"
#include "base/error.h"
#include "base/half.h"

namespace mx {

enum class DType : int32_t {
  kFloat32 = 0,
  kFloat64 = 1,
  kFloat16 = 2,
  kUint8 = 3,
  kInt32 = 4,
  kInt8 = 5,
  kInt64 = 6,
  kBFloat16 = 12,  // mshadow's kBfloat16 (flags 7 to 11 are types mx does not have)
};

// Every dtype mx has, in flag order.
inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                       DType::kUint8,   DType::kInt32,   DType::kInt8,
                                       DType::kInt64,   DType::kBFloat16};

bool is_valid_dtype_flag(int32_t flag);
size_t dtype_size(DType dtype);
// MXNet's names: "float32", "float64", "float16", "uint8", "int32", "int8", "int64",
// "bfloat16".
const char* dtype_name(DType dtype);
// Accepts the names above; throws InputError listing them otherwise.
DType parse_dtype(const std::string& name);
bool is_floating(DType dtype);

template <typename T>
struct DTypeOf;
template <>
struct DTypeOf<float> {
  static constexpr DType value = DType::kFloat32;
};
template <>
struct DTypeOf<double> {
  static constexpr DType value = DType::kFloat64;
};
template <>
struct DTypeOf<half_t> {
  static constexpr DType value = DType::kFloat16;
};
template <>
struct DTypeOf<bf16_t> {
  static constexpr DType value = DType::kBFloat16;
};
template <>
struct DTypeOf<uint8_t> {
  static constexpr DType value = DType::kUint8;
};
template <>
struct DTypeOf<int32_t> {
  static constexpr DType value = DType::kInt32;
};
template <>
struct DTypeOf<int8_t> {
  static constexpr DType value = DType::kInt8;
};
template <>
struct DTypeOf<int64_t> {
  static constexpr DType value = DType::kInt64;
};

template <typename T>
inline constexpr DType dtype_of = DTypeOf<T>::value;

// The 16-bit float types, stored as bits and computed through float.
template <typename T>
inline constexpr bool is_half_like_v = std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>;

// Passed to the callback of dispatch_dtype: `using T = typename decltype(tag)::type;`.
template <typename T>
struct TypeTag {
  using type = T;
};

// Calls fn(TypeTag<T>{}) with T the C++ type of `dtype`.
template <typename Fn>
decltype(auto) dispatch_dtype(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kFloat16: return fn(TypeTag<half_t>{});
    case DType::kUint8: return fn(TypeTag<uint8_t>{});
    case DType::kInt32: return fn(TypeTag<int32_t>{});
    case DType::kInt8: return fn(TypeTag<int8_t>{});
    case DType::kInt64: return fn(TypeTag<int64_t>{});
    case DType::kBFloat16: return fn(TypeTag<bf16_t>{});
  }
  throw Error(str("invalid dtype flag ", static_cast<int32_t>(dtype)));
}

}  // namespace mx
