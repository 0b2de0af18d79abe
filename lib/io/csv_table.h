// Numeric CSV tables: one example per line, comma-separated numbers (spaces
// around them allowed), an optional header line. Every error names the file,
// the line and the column.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mx {

struct CsvTable {
  int64_t rows = 0, cols = 0;
  std::vector<float> values;   // row-major
  int64_t first_line = 1;      // the file line of row 0 (2 after a header)
  std::vector<int64_t> lines;  // the file line of each row

  int64_t line_of(int64_t r) const { return lines[static_cast<size_t>(r)]; }

  const float* row(int64_t r) const { return values.data() + r * cols; }
};

struct CsvOptions {
  bool header = false;    // skip the first line
  int64_t max_rows = -1;  // read only this many rows (>= 0)
};

CsvTable read_csv(const std::string& path, const CsvOptions& options = {});

// True when the first line has a field that is not a number (a header).
bool csv_has_header(const std::string& path);

}  // namespace mx
