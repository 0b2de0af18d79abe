#include "base/shape.h"

#include <ostream>

#include "base/error.h"
#include "base/int_tuple.h"

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
  const size_t first = text.find_first_not_of(" \t\n\v\f\r");
  if (first != std::string::npos && text.compare(first, 4, "None") == 0) {
    if (text.find_first_not_of(" \t\n\v\f\r", first + 4) != std::string::npos)
      throw InputError("cannot parse shape '" + text + "': unexpected text after None");
    return Shape();
  }
  const std::vector<int64_t> dims = parse_int_tuple(text, {"shape", "dimension", false, true});
  if (dims.size() > static_cast<size_t>(kMaxNdim))
    throw InputError(str("cannot parse shape '", text, "': more than ", kMaxNdim, " dimensions"));
  return Shape(dims);
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.to_string(); }

}  // namespace mx
