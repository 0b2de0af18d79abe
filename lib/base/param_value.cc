#include "base/param_value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "base/strings.h"

namespace mx::param_value {

bool parse_bool(const std::string& text) {
  std::string s = to_lower(trim(text));
  if (s == "true" || s == "1") return true;
  if (s == "false" || s == "0") return false;
  throw InputError("'" + text + "' is not a boolean (expected True or False)");
}

int64_t parse_int(const std::string& text) {
  std::string s = trim(text);
  // MXNet writes 64-bit integers with an 'L' suffix in old files.
  if (!s.empty() && (s.back() == 'L' || s.back() == 'l')) s.pop_back();
  int64_t value = 0;
  const char* first = s.data();
  if (!s.empty() && s[0] == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, s.data() + s.size(), value);
  if (ec == std::errc::result_out_of_range) throw InputError("'" + text + "' is out of range");
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    throw InputError("'" + text + "' is not an integer");
  return value;
}

double parse_double(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) throw InputError("empty text is not a number");
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) throw InputError("'" + text + "' is not a number");
  return value;
}

std::string print_bool(bool value) { return value ? "True" : "False"; }

template <typename F>
static std::string shortest(F value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string s(buffer, ptr);
  // Keep a visible decimal point for whole numbers in fixed notation: "1.0".
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string print_double(double value) { return shortest(value); }
std::string print_float(float value) { return shortest(value); }

}  // namespace mx::param_value
