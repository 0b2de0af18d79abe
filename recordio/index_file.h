// .idx files: one "key\toffset\n" line per record (MXIndexedRecordIO's
// layout), the key an integer and the offset the record's first byte.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace recordio {

struct IndexEntry {
  int64_t key = 0;
  uint64_t offset = 0;
  bool operator==(const IndexEntry&) const = default;
};

// Entries in file order. Malformed lines throw FormatError with the line.
std::vector<IndexEntry> read_index(const std::string& path);
std::vector<IndexEntry> parse_index(std::string_view text, const std::string& name);

void write_index(std::ostream& out, const std::vector<IndexEntry>& entries);

}  // namespace recordio
