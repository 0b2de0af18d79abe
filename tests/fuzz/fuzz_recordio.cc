// Feeds arbitrary bytes to the RecordIO readers: sequential (strict and
// resynchronising), headers only, sharded by byte ranges, random access
// through an index, and the .idx/.lst text parsers. Each must return or
// throw recordio::FormatError; never crash, hang, or allocate beyond the
// input's size.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "recordio/format_error.h"
#include "recordio/index_file.h"
#include "recordio/indexed_reader.h"
#include "recordio/list_file.h"
#include "recordio/reader.h"

namespace {

void read_all(std::shared_ptr<const recordio::ByteSource> source, recordio::ReaderOptions options) {
  try {
    recordio::Reader reader(std::move(source), std::move(options));
    recordio::Record record;
    uint64_t last = 0;
    bool first = true;
    while (reader.next(record)) {
      // Records come in file order and never overlap.
      if (!first && record.offset < last) __builtin_trap();
      if (record.end <= record.offset) __builtin_trap();
      last = record.end;
      first = false;
    }
  } catch (const recordio::FormatError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  auto source = std::make_shared<recordio::MemorySource>(bytes, "fuzz.rec");

  read_all(source, {});
  recordio::ReaderOptions lenient;
  lenient.on_damage = [](const recordio::FormatError&) {};
  lenient.buffer_size = 64;
  read_all(source, lenient);
  lenient.headers_only = true;
  read_all(source, lenient);
  const uint64_t parts = size > 0 ? 1 + data[0] % 5 : 1;
  for (uint64_t k = 0; k < parts; ++k) {
    recordio::ReaderOptions shard = lenient;
    shard.headers_only = false;
    shard.begin = size * k / parts;
    shard.end = size * (k + 1) / parts;
    read_all(source, shard);
  }

  try {
    auto index = recordio::scan_index(source, [](const recordio::FormatError&) {});
    // Offsets from the scan, and some from the input itself.
    for (size_t i = 0; i + 4 <= size && i < 64; i += 4)
      index.push_back({static_cast<int64_t>(i), (uint64_t{data[i]} << 2) % (size + 1)});
    std::string payload;
    for (const auto& e : index) {
      try {
        recordio::IndexedReader reader(source, {e}, "fuzz.idx");
        reader.read(0, payload);
      } catch (const recordio::FormatError&) {
      }
    }
  } catch (const recordio::FormatError&) {
  }

  try {
    recordio::parse_index(bytes, "fuzz.idx");
  } catch (const recordio::FormatError&) {
  }
  try {
    recordio::parse_list(bytes, "fuzz.lst");
  } catch (const recordio::FormatError&) {
  }
  return 0;
}
