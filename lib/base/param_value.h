// Parsing and printing of one parameter value from/to MXNet's attribute
// strings: "True", "3", "0.001", "(3, 3)", "relu", "None", "float32".
// Parse failures throw InputError with a short reason; the caller (Params)
// adds which parameter of what the value was for.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "base/context.h"
#include "base/dtype.h"
#include "base/shape.h"

namespace mx::param_value {

bool parse_bool(const std::string& text);
int64_t parse_int(const std::string& text);
double parse_double(const std::string& text);

std::string print_bool(bool value);
// Shortest decimal text that reads back as the same value.
std::string print_double(double value);
std::string print_float(float value);

template <typename T>
struct Codec;

template <>
struct Codec<bool> {
  static constexpr const char* kTypeName = "boolean";
  static bool parse(const std::string& s) { return parse_bool(s); }
  static std::string print(bool v) { return print_bool(v); }
};

template <typename T>
struct IntCodec {
  static constexpr const char* kTypeName = "int";
  static T parse(const std::string& s) {
    int64_t v = parse_int(s);
    if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
        v > static_cast<int64_t>(std::numeric_limits<T>::max()))
      throw InputError("'" + s + "' does not fit the integer type");
    return static_cast<T>(v);
  }
  static std::string print(T v) { return std::to_string(v); }
};
template <>
struct Codec<int> : IntCodec<int> {};
template <>
struct Codec<int64_t> : IntCodec<int64_t> {};
template <>
struct Codec<uint32_t> : IntCodec<uint32_t> {};

template <>
struct Codec<float> {
  static constexpr const char* kTypeName = "float";
  static float parse(const std::string& s) { return static_cast<float>(parse_double(s)); }
  static std::string print(float v) { return print_float(v); }
};
template <>
struct Codec<double> {
  static constexpr const char* kTypeName = "double";
  static double parse(const std::string& s) { return parse_double(s); }
  static std::string print(double v) { return print_double(v); }
};
template <>
struct Codec<std::string> {
  static constexpr const char* kTypeName = "string";
  static std::string parse(const std::string& s) { return s; }
  static std::string print(const std::string& v) { return v; }
};
template <>
struct Codec<Shape> {
  static constexpr const char* kTypeName = "Shape(tuple)";
  static Shape parse(const std::string& s) { return Shape::parse(s); }
  static std::string print(const Shape& v) { return v.to_string(); }
};
template <>
struct Codec<DType> {
  static constexpr const char* kTypeName = "dtype";
  static DType parse(const std::string& s) { return parse_dtype(s); }
  static std::string print(DType v) { return dtype_name(v); }
};
template <>
struct Codec<Context> {
  static constexpr const char* kTypeName = "device";
  static Context parse(const std::string& s) { return Context::parse(s); }
  static std::string print(const Context& v) { return v.to_string(); }
};

// "None" is the absent value, as in MXNet.
template <typename T>
struct Codec<std::optional<T>> {
  static constexpr const char* kTypeName = Codec<T>::kTypeName;
  static std::optional<T> parse(const std::string& s) {
    if (s == "None" || s.empty()) return std::nullopt;
    return Codec<T>::parse(s);
  }
  static std::string print(const std::optional<T>& v) {
    return v ? Codec<T>::print(*v) : std::string("None");
  }
};

}  // namespace mx::param_value
