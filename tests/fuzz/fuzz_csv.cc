// Feeds arbitrary text to the CSV readers (the CSV table of mx-pack and
// CSVIter's data_csv): each must return or throw InputError naming the file
// and line, never crash or hang. The first input byte picks the options.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "fuzz_temp_dir.h"
#include "io/csv_iter.h"
#include "io/csv_table.h"

namespace {

const std::string& input_path() {
  static const mx::fuzz::FuzzTempDir made("csv");  // removed at exit
  static const std::string path = made.path() + "/input.csv";
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t options = data[0];
  const std::string& path = input_path();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data + 1), static_cast<std::streamsize>(size - 1));
  }
  mx::CsvTable table;
  try {
    mx::csv_has_header(path);
    table = mx::read_csv(path, {(options & 1) != 0, (options & 2) ? 3 : -1});
    for (int64_t r = 0; r < table.rows; ++r) table.line_of(r);
  } catch (const mx::InputError&) {
  }
  try {
    // Rows of `cols` values as examples; a label column when the byte says so.
    const int cols = 1 + options % 7;
    const bool label_column = (options & 8) != 0;
    mx::CSVIter iter(mx::CSVIterParam::from_strings(
        {{"data_csv", path},
         {"data_shape", "(" + std::to_string(label_column ? cols - 1 : cols) + ",)"},
         {"label_column", label_column ? "0" : "-1"},
         {"batch_size", std::to_string(1 + (options >> 4))},
         {"shuffle", (options & 4) ? "True" : "False"}},
        "fuzz"));
    for (int epoch = 0; epoch < 2; ++epoch) {
      while (auto batch = iter.next()) batch->data.wait_to_read();
      iter.reset();
    }
  } catch (const mx::InputError&) {
  }
  return 0;
}
