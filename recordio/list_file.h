// .lst files (im2rec): one line per image, "index\tlabel[\tlabel...]\tpath",
// fields separated by tabs. Written as im2rec writes them: labels with six
// decimals ("%f"), so our lists and im2rec's are the same bytes.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace recordio {

struct ListEntry {
  int64_t index = 0;
  std::vector<float> labels;  // at least one
  std::string path;           // relative to the list's root folder
};

// Blank lines are skipped; a line with fewer than three fields, a bad index
// or label throws FormatError with the line number.
std::vector<ListEntry> read_list(const std::string& path);
std::vector<ListEntry> parse_list(std::string_view text, const std::string& name);

void write_list(std::ostream& out, const std::vector<ListEntry>& entries);

}  // namespace recordio
