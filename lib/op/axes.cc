#include "op/axes.h"

#include "base/error.h"
#include "base/int_tuple.h"
#include "op/infer_util.h"

namespace mx::op {

IntTuple IntTuple::parse(const std::string& text) {
  return IntTuple(parse_int_tuple(text, {"integer tuple", "element", true, false}));
}

std::string IntTuple::to_string() const {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(values[i]);
  }
  if (values.size() == 1) s += ",";
  return s + ")";
}

int normalize_axis(int64_t axis, const Shape& shape) {
  const int ndim = shape.ndim();
  if (axis < -ndim || axis >= ndim)
    throw ShapeError(str("axis ", axis, " is out of range for an array of ", ndim,
                         " dimensions (shape ", shape.to_string(), ")"));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

int normalize_axis(int64_t axis, int ndim) {
  if (axis < -ndim || axis >= ndim)
    throw ShapeError(str("axis ", axis, " is out of range [", -ndim, ", ", ndim - 1, "]"));
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

}  // namespace mx::op
