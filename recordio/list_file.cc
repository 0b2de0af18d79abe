#include "recordio/list_file.h"

#include <cstdio>
#include <ostream>

#include "recordio/format_error.h"
#include "recordio/text_lines.h"

namespace recordio {

std::vector<ListEntry> parse_list(std::string_view text, const std::string& name) {
  std::vector<ListEntry> entries;
  text::for_each_line(text, [&](uint64_t number, std::string_view line) {
    if (text::strip(line).empty()) return;
    const auto fields = text::split_tabs(text::strip(line));
    if (fields.size() < 3)
      throw FormatError::at_line(name, number,
                                 "expected 'index<TAB>label(s)<TAB>path', found " +
                                     std::to_string(fields.size()) + " tab-separated field(s)");
    ListEntry entry;
    if (!text::parse_int(fields[0], entry.index))
      throw FormatError::at_line(name, number,
                                 "index '" + std::string(fields[0]) + "' is not an integer");
    for (size_t i = 1; i + 1 < fields.size(); ++i) {
      float value = 0;
      if (!text::parse_float(fields[i], value))
        throw FormatError::at_line(
            name, number,
            "label " + std::to_string(i) + " '" + std::string(fields[i]) + "' is not a number");
      entry.labels.push_back(value);
    }
    entry.path = std::string(fields.back());
    if (entry.path.empty()) throw FormatError::at_line(name, number, "the path is empty");
    entries.push_back(std::move(entry));
  });
  return entries;
}

std::vector<ListEntry> read_list(const std::string& path) {
  return parse_list(text::read_whole_file(path), path);
}

void write_list(std::ostream& out, const std::vector<ListEntry>& entries) {
  char number[64];
  for (const auto& e : entries) {
    out << e.index << '\t';
    for (float label : e.labels) {
      std::snprintf(number, sizeof number, "%f\t", static_cast<double>(label));
      out << number;
    }
    out << e.path << '\n';
  }
}

}  // namespace recordio
