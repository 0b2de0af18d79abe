// Axis parameters of the tensor operators: tuples of integers that may be
// negative (MXNet's Shape-typed `axis`/`axes` and Reshape's special codes
// 0, -1, -2, -3, -4) or None (slice's begin/end/step), and the normalization of a negative axis
// against a rank.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/param_value.h"
#include "base/shape.h"

namespace mx::op {

// A tuple of integers as MXNet writes it: "(0, -1)", "(2,)", "()", "[1,2]"
// or a bare "3" (a one-element tuple).
struct IntTuple {
  std::vector<int64_t> values;

  IntTuple() = default;
  IntTuple(std::initializer_list<int64_t> v) : values(v) {}
  explicit IntTuple(std::vector<int64_t> v) : values(std::move(v)) {}

  int size() const { return static_cast<int>(values.size()); }
  bool empty() const { return values.empty(); }
  int64_t operator[](int i) const { return values[static_cast<size_t>(i)]; }
  bool operator==(const IntTuple& other) const = default;

  // Throws InputError naming the text.
  static IntTuple parse(const std::string& text);
  std::string to_string() const;
};

// A tuple whose entries may be None, as slice's begin/end/step:
// "(None, 0)", "(1, -1)", "()", "[2]".
struct OptionalIntTuple {
  std::vector<std::optional<int64_t>> values;

  int size() const { return static_cast<int>(values.size()); }
  bool empty() const { return values.empty(); }
  const std::optional<int64_t>& operator[](int i) const { return values[static_cast<size_t>(i)]; }
  bool operator==(const OptionalIntTuple& other) const = default;

  // Throws InputError naming the text.
  static OptionalIntTuple parse(const std::string& text);
  std::string to_string() const;
};

// `axis` in [-ndim, ndim) mapped to [0, ndim); otherwise throws ShapeError
// "axis 3 is out of range for an array of 3 dimensions (shape (2, 3, 4))".
int normalize_axis(int64_t axis, const Shape& shape);
// The same for a rank alone (expand_dims allows one past the end: pass ndim + 1).
int normalize_axis(int64_t axis, int ndim);

}  // namespace mx::op

namespace mx::param_value {

template <>
struct Codec<op::IntTuple> {
  static constexpr const char* kTypeName = "Shape(tuple)";
  static op::IntTuple parse(const std::string& s) { return op::IntTuple::parse(s); }
  static std::string print(const op::IntTuple& v) { return v.to_string(); }
};

template <>
struct Codec<op::OptionalIntTuple> {
  static constexpr const char* kTypeName = "Shape(tuple)";
  static op::OptionalIntTuple parse(const std::string& s) { return op::OptionalIntTuple::parse(s); }
  static std::string print(const op::OptionalIntTuple& v) { return v.to_string(); }
};

}  // namespace mx::param_value
