// Line splitting and number parsing shared by the .idx and .lst parsers.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace recordio::text {

// The file's bytes; throws FormatError when it cannot be read.
std::string read_whole_file(const std::string& path);

// Calls fn(line_number, line) for each line, without "\n" or "\r\n".
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  uint64_t number = 0;
  while (!text.empty()) {
    ++number;
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    fn(number, line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Python's str.strip() for ASCII whitespace.
std::string_view strip(std::string_view s);
std::vector<std::string_view> split_tabs(std::string_view line);

// Whole-field parses; false when the field is not entirely a number.
bool parse_int(std::string_view field, int64_t& value);
bool parse_uint(std::string_view field, uint64_t& value);
bool parse_float(std::string_view field, float& value);

}  // namespace recordio::text
