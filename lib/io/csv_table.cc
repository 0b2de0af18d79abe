#include "io/csv_table.h"

#include <charconv>
#include <fstream>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"

namespace mx {
namespace {

bool parse_number(std::string_view field, float& value) {
  while (!field.empty() && (field.front() == ' ' || field.front() == '\t')) field.remove_prefix(1);
  while (!field.empty() && (field.back() == ' ' || field.back() == '\t' || field.back() == '\r'))
    field.remove_suffix(1);
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  if (field.empty()) return false;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size();
}

std::ifstream open(const std::string& path) {
  file_size(path);  // clear errors for missing files and directories
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open '" + path + "'");
  return in;
}

}  // namespace

CsvTable read_csv(const std::string& path, const CsvOptions& options) {
  std::ifstream in = open(path);
  CsvTable table;
  std::string line;
  int64_t number = 0;
  if (options.header) {
    std::getline(in, line);
    number = 1;
  }
  table.first_line = number + 1;
  while ((options.max_rows < 0 || table.rows < options.max_rows) && std::getline(in, line)) {
    ++number;
    if (trim(line).empty()) continue;
    int64_t cols = 0;
    size_t begin = 0;
    while (true) {
      const size_t comma = line.find(',', begin);
      std::string_view field(line.data() + begin,
                             (comma == std::string::npos ? line.size() : comma) - begin);
      float value = 0;
      if (!parse_number(field, value))
        throw InputError(str(path, ":", number, ": column ", cols + 1, ": '", trim(field),
                             "' is not a number",
                             number == 1 ? " (if the first line is a header, say so)" : ""));
      table.values.push_back(value);
      ++cols;
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (table.rows == 0) {
      table.cols = cols;
      table.first_line = number;
    } else if (cols != table.cols) {
      throw InputError(str(path, ":", number, ": ", cols, " columns, but line ", table.first_line,
                           " has ", table.cols));
    }
    table.lines.push_back(number);
    ++table.rows;
  }
  if (in.bad()) throw InputError("error while reading '" + path + "'");
  return table;
}

bool csv_has_header(const std::string& path) {
  std::ifstream in = open(path);
  std::string line;
  if (!std::getline(in, line)) return false;
  for (const auto& field : split(line, ',')) {
    float value;
    if (!parse_number(field, value)) return true;
  }
  return false;
}

}  // namespace mx
