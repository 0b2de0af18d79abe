#include "base/shape.h"

#include <cctype>
#include <ostream>

#include "base/error.h"

namespace mx {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::vector<int64_t>(dims)) {}

Shape::Shape(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(kMaxNdim))
    throw InputError(
        str("shape has ", dims.size(), " dimensions; at most ", kMaxNdim, " are supported"));
  ndim_ = static_cast<int>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) dims_[i] = dims[i];
}

Shape Shape::filled(int ndim, int64_t value) {
  if (ndim < 0 || ndim > kMaxNdim)
    throw InputError(str("shape rank ", ndim, " is outside [0, ", kMaxNdim, "]"));
  Shape s;
  s.ndim_ = ndim;
  for (int i = 0; i < ndim; ++i) s.dims_[static_cast<size_t>(i)] = value;
  return s;
}

bool Shape::is_known() const {
  if (ndim_ < 0) return false;
  for (int i = 0; i < ndim_; ++i)
    if ((*this)[i] < 0) return false;
  return true;
}

int64_t Shape::size() const {
  MX_CHECK(is_known(), "size() of partly unknown shape ", to_string());
  return prod(0, ndim_);
}

int64_t Shape::prod(int begin, int end) const {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) p *= (*this)[i];
  return p;
}

bool Shape::operator==(const Shape& other) const {
  if (ndim_ != other.ndim_) return false;
  for (int i = 0; i < ndim_; ++i)
    if ((*this)[i] != other[i]) return false;
  return true;
}

std::string Shape::to_string() const {
  if (ndim_ < 0) return "None";
  std::string s = "(";
  for (int i = 0; i < ndim_; ++i) {
    if (i > 0) s += ", ";
    s += std::to_string((*this)[i]);
  }
  if (ndim_ == 1) s += ",";
  return s + ")";
}

Shape Shape::parse(const std::string& text) {
  auto fail = [&](const std::string& why) -> InputError {
    return InputError("cannot parse shape '" + text + "': " + why);
  };
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  skip_space();
  if (text.compare(i, 4, "None") == 0) {
    i += 4;
    skip_space();
    if (i != text.size()) throw fail("unexpected text after None");
    return Shape();
  }
  char close = '\0';
  if (i < text.size() && (text[i] == '(' || text[i] == '[')) {
    close = text[i] == '(' ? ')' : ']';
    ++i;
  }
  std::vector<int64_t> dims;
  bool expect_number = true;  // after '(' or ','
  for (;;) {
    skip_space();
    if (i == text.size()) {
      if (close != '\0') throw fail(std::string("missing closing '") + close + "'");
      break;
    }
    char c = text[i];
    if (close != '\0' && c == close) {
      ++i;
      skip_space();
      if (i != text.size()) throw fail("unexpected text after the closing bracket");
      break;
    }
    if (c == ',') {
      if (expect_number) throw fail("empty dimension");
      expect_number = true;
      ++i;
      continue;
    }
    if (!expect_number) throw fail("expected ',' between dimensions");
    size_t start = i;
    if (c == '-' || c == '+') ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    // MXNet writes 64-bit dims with an 'L' suffix in old files.
    std::string digits = text.substr(start, i - start);
    if (i < text.size() && (text[i] == 'L' || text[i] == 'l')) ++i;
    if (digits.empty() || digits == "-" || digits == "+")
      throw fail(str("unexpected character '", c, "' at position ", start));
    try {
      dims.push_back(std::stoll(digits));
    } catch (const std::exception&) {
      throw fail("dimension '" + digits + "' is out of range");
    }
    if (dims.back() < -1) throw fail("dimension " + digits + " is negative");
    expect_number = false;
  }
  if (dims.size() > static_cast<size_t>(kMaxNdim))
    throw fail(str("more than ", kMaxNdim, " dimensions"));
  return Shape(dims);
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.to_string(); }

}  // namespace mx
