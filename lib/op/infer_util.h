// Helpers for shape and type inference that work from partial information:
// a shape may have unknown rank or unknown dims (-1), and every helper fills
// what it can and throws ShapeError naming both shapes on a conflict.
#pragma once

#include <optional>
#include <string>

#include "base/dtype.h"
#include "base/error.h"
#include "base/shape.h"
#include "op/op_def.h"

namespace mx::op {

// A shape conflict found during inference; the graph layer adds the node.
class ShapeError : public InputError {
 public:
  explicit ShapeError(const std::string& message) : InputError(message) {}
};

// Merges `value` into `target`: unknown parts of either side are taken from
// the other; known dims that differ throw ShapeError mentioning `what`.
void assign_shape(Shape& target, const Shape& value, const std::string& what);
// The same for dtypes.
void assign_type(std::optional<DType>& target, std::optional<DType> value, const std::string& what);

// "input 'weight'" etc., for messages.
std::string input_label(const std::vector<std::string>& names, size_t index);

// True when every shape in `shapes` is fully known.
bool all_known(const ShapeVector& shapes);

// Element-wise operators: all inputs and outputs share one shape.
void infer_same_shape(ShapeVector& in, ShapeVector& out);

// Throws ShapeError unless `shape` has exactly `ndim` dims (or unknown rank).
void require_ndim(const Shape& shape, int ndim, const std::string& what);

// The real (floating) types a kernel supports, for dispatch.
template <typename Fn>
decltype(auto) dispatch_real(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    default: break;
  }
  throw Error(str(op, " supports float32 and float64, not ", dtype_name(dtype)));
}

// dispatch_real and bfloat16 storage, for the kernels of operators that run
// in mixed precision (their values computed through float).
template <typename Fn>
decltype(auto) dispatch_real_bf16(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kBFloat16: return fn(TypeTag<bf16_t>{});
    default: break;
  }
  throw Error(str(op, " supports float32, float64 and bfloat16, not ", dtype_name(dtype)));
}

// dispatch_real and both 16-bit float types, for the GPU kernels of the
// operators that run in mixed precision (float16 and bfloat16 stored, computed
// through float).
template <typename Fn>
decltype(auto) dispatch_real_amp(DType dtype, const char* op, Fn&& fn) {
  switch (dtype) {
    case DType::kFloat32: return fn(TypeTag<float>{});
    case DType::kFloat64: return fn(TypeTag<double>{});
    case DType::kFloat16: return fn(TypeTag<half_t>{});
    case DType::kBFloat16: return fn(TypeTag<bf16_t>{});
    default: break;
  }
  throw Error(str(op, " supports float32, float64, float16 and bfloat16, not ", dtype_name(dtype)));
}

}  // namespace mx::op
