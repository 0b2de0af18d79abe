#include "recordio/index_file.h"

#include <ostream>

#include "recordio/format_error.h"
#include "recordio/text_lines.h"

namespace recordio {

std::vector<IndexEntry> parse_index(std::string_view text, const std::string& name) {
  std::vector<IndexEntry> entries;
  text::for_each_line(text, [&](uint64_t number, std::string_view line) {
    line = text::strip(line);
    if (line.empty()) return;
    const auto fields = text::split_tabs(line);
    if (fields.size() != 2)
      throw FormatError::at_line(name, number,
                                 "expected 'key<TAB>offset', found " +
                                     std::to_string(fields.size()) + " tab-separated field(s)");
    IndexEntry entry;
    if (!text::parse_int(fields[0], entry.key))
      throw FormatError::at_line(name, number,
                                 "key '" + std::string(fields[0]) + "' is not an integer");
    if (!text::parse_uint(fields[1], entry.offset))
      throw FormatError::at_line(
          name, number, "offset '" + std::string(fields[1]) + "' is not a non-negative integer");
    entries.push_back(entry);
  });
  return entries;
}

std::vector<IndexEntry> read_index(const std::string& path) {
  return parse_index(text::read_whole_file(path), path);
}

void write_index(std::ostream& out, const std::vector<IndexEntry>& entries) {
  for (const auto& e : entries) out << e.key << '\t' << e.offset << '\n';
}

}  // namespace recordio
