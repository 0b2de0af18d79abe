#include "op/axes.h"

#include "base/error.h"
#include "base/int_tuple.h"
#include "base/strings.h"
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

OptionalIntTuple OptionalIntTuple::parse(const std::string& text) {
  auto fail = [&](const std::string& why) {
    return InputError(str("cannot parse integer tuple '", text, "': ", why));
  };
  std::string body = trim(text);
  if (!body.empty() && (body.front() == '(' || body.front() == '[')) {
    const char close = body.front() == '(' ? ')' : ']';
    if (body.back() != close) throw fail(std::string("missing closing '") + close + "'");
    body = trim(std::string_view(body).substr(1, body.size() - 2));
  }
  OptionalIntTuple tuple;
  if (body.empty()) return tuple;
  std::vector<std::string> parts = split(body, ',');
  if (parts.size() > 1 && trim(parts.back()).empty()) parts.pop_back();  // "(5,)"
  for (const std::string& part : parts) {
    const std::string element = trim(part);
    if (element.empty()) throw fail("empty element");
    if (element == "None") {
      tuple.values.emplace_back(std::nullopt);
      continue;
    }
    std::vector<int64_t> one;
    try {
      one = parse_int_tuple(element, {"integer tuple", "element", true, false});
    } catch (const InputError&) {
      throw fail(str("element '", element, "' is neither an integer nor None"));
    }
    if (one.size() != 1) throw fail(str("element '", element, "' is not one integer"));
    tuple.values.emplace_back(one[0]);
  }
  return tuple;
}

std::string OptionalIntTuple::to_string() const {
  std::string s = "(";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) s += ", ";
    s += values[i] ? std::to_string(*values[i]) : std::string("None");
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
