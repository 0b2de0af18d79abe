#include "recordio/text_lines.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "recordio/format_error.h"

namespace recordio::text {

std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FormatError::in_file(path, std::string("cannot open: ") + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  if (in.bad()) throw FormatError::in_file(path, "read error");
  return content.str();
}

std::string_view strip(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const size_t end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  while (true) {
    const size_t tab = line.find('\t');
    fields.push_back(strip(line.substr(0, tab)));
    if (tab == std::string_view::npos) break;
    line.remove_prefix(tab + 1);
  }
  return fields;
}

bool parse_int(std::string_view field, int64_t& value) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

bool parse_uint(std::string_view field, uint64_t& value) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

bool parse_float(std::string_view field, float& value) {
  // strtof accepts what Python's float() does for the usual spellings
  // (1, 1.5, -2e3, inf, nan); it needs a terminated string.
  if (field.empty() || field.size() > 64) return false;
  char buffer[65];
  std::memcpy(buffer, field.data(), field.size());
  buffer[field.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  value = std::strtof(buffer, &end);
  return end == buffer + field.size();
}

}  // namespace recordio::text
