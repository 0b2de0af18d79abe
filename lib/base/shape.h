// Shape: the dimensions of a tensor, stored inline (no allocation).
// During shape inference a shape may be partly unknown: ndim() == -1 means the
// number of dimensions is unknown, a dimension of -1 means that size is
// unknown (MXNet's numpy-shape convention).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace mx {

class Shape {
 public:
  static constexpr int kMaxNdim = 16;
  static constexpr int64_t kUnknownDim = -1;

  // A shape of unknown rank.
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  explicit Shape(const std::vector<int64_t>& dims);
  // A shape of known rank `ndim` with every dimension `value`.
  static Shape filled(int ndim, int64_t value);
  static Shape scalar() { return filled(0, 0); }

  int ndim() const { return ndim_; }
  bool rank_known() const { return ndim_ >= 0; }
  // True when the rank and every dimension are known.
  bool is_known() const;
  // Number of elements; requires a known shape.
  int64_t size() const;
  // Product of dims [begin, end).
  int64_t prod(int begin, int end) const;

  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + (ndim_ > 0 ? ndim_ : 0); }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }

  // MXNet's spelling: "(2, 3)", "(5,)", "()" for a scalar, "None" for unknown
  // rank and "-1" for an unknown dimension.
  std::string to_string() const;
  // Parses "(2, 3)", "[2,3]", "2,3", "(5,)", "5", "()" and "None".
  // Throws InputError naming the text on failure.
  static Shape parse(const std::string& text);

 private:
  int ndim_ = -1;
  std::array<int64_t, kMaxNdim> dims_{};
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

}  // namespace mx
