#include "op/axes.h"

#include <cctype>

#include "base/error.h"
#include "op/infer_util.h"

namespace mx::op {

IntTuple IntTuple::parse(const std::string& text) {
  auto fail = [&](const std::string& why) {
    return InputError("cannot parse integer tuple '" + text + "': " + why);
  };
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  char close = '\0';
  if (i < text.size() && (text[i] == '(' || text[i] == '[')) {
    close = text[i] == '(' ? ')' : ']';
    ++i;
  }
  IntTuple out;
  bool expect_number = true;
  for (;;) {
    skip_space();
    if (i == text.size()) {
      if (close != '\0') throw fail(std::string("missing closing '") + close + "'");
      if (out.empty() && expect_number) throw fail("no values");
      break;
    }
    const char c = text[i];
    if (close != '\0' && c == close) {
      ++i;
      skip_space();
      if (i != text.size()) throw fail("unexpected text after the closing bracket");
      break;
    }
    if (c == ',') {
      if (expect_number) throw fail("empty element");
      expect_number = true;
      ++i;
      continue;
    }
    if (!expect_number) throw fail("expected ',' between elements");
    const size_t start = i;
    if (c == '-' || c == '+') ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    const std::string digits = text.substr(start, i - start);
    // MXNet writes 64-bit values with an 'L' suffix in old files.
    if (i < text.size() && (text[i] == 'L' || text[i] == 'l')) ++i;
    if (digits.empty() || digits == "-" || digits == "+")
      throw fail(str("unexpected character '", c, "' at position ", start));
    try {
      out.values.push_back(std::stoll(digits));
    } catch (const std::exception&) {
      throw fail("element '" + digits + "' is out of range");
    }
    expect_number = false;
  }
  return out;
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
