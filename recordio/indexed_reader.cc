#include "recordio/indexed_reader.h"

#include <sstream>

#include "recordio/format_error.h"
#include "recordio/reader.h"
#include "recordio/record_format.h"

namespace recordio {

IndexedReader::IndexedReader(std::shared_ptr<const ByteSource> source,
                             std::vector<IndexEntry> index, const std::string& index_name)
    : source_(std::move(source)), entries_(std::move(index)) {
  const uint64_t size = source_->size();
  for (size_t i = 0; i < entries_.size(); ++i) {
    const uint64_t offset = entries_[i].offset;
    if (offset % 4 != 0 || size < kHeaderSize || offset > size - kHeaderSize)
      throw FormatError::at_line(
          index_name, i + 1,
          "key " + std::to_string(entries_[i].key) + ": offset " + std::to_string(offset) +
              (offset % 4 != 0 ? " is not a multiple of 4, so no record can start there"
                               : " is past the end of '" + source_->name() + "' (" +
                                     std::to_string(size) + " bytes)") +
              "; is the .idx from another .rec?");
  }
}

IndexedReader IndexedReader::open(const std::string& rec_path, const std::string& idx_path) {
  return IndexedReader(open_file(rec_path), read_index(idx_path), idx_path);
}

void IndexedReader::read_at(uint64_t offset, std::string& payload) const {
  payload.clear();
  const uint64_t size = source_->size();
  uint64_t pos = offset;
  bool first = true;
  while (true) {
    uint32_t header[2] = {0, 0};
    if (pos > size || source_->read_at(pos, header, sizeof header) != sizeof header)
      throw FormatError(name(), pos,
                        first ? "an index entry points here, but the file ends before a record "
                                "header; the file is truncated or the .idx is from another file"
                              : "the file ends inside a record split into parts (record at "
                                "byte " +
                                    std::to_string(offset) + ")");
    if (header[0] != kMagic) {
      std::ostringstream found;
      found << std::hex << header[0];
      throw FormatError(name(), pos,
                        std::string(first ? "an index entry points here, but there is no record "
                                            "header"
                                          : "a part of the record at byte " +
                                                std::to_string(offset) + " is damaged") +
                            " (found 0x" + found.str() + ", expected the magic 0xced7230a)");
    }
    const uint32_t cflag = lrec_flag(header[1]);
    const uint32_t length = lrec_length(header[1]);
    const bool expected =
        first ? (cflag == kWhole || cflag == kFirst) : (cflag == kMiddle || cflag == kLast);
    if (!expected)
      throw FormatError(name(), pos,
                        "unexpected part flag " + std::to_string(cflag) +
                            (first ? " at an indexed record (expected 0 or 1)"
                                   : " inside the record at byte " + std::to_string(offset) +
                                         " (expected 2 or 3)"));
    if (padded_length(length) > size - pos - kHeaderSize)
      throw FormatError(name(), pos,
                        "record length " + std::to_string(length) +
                            " runs past the end of the file; the file is truncated");
    const size_t have = payload.size();
    payload.resize(have + length);
    if (source_->read_at(pos + kHeaderSize, payload.data() + have, length) != length)
      throw FormatError(name(), pos + kHeaderSize, "the file became shorter while it was read");
    pos += kHeaderSize + padded_length(length);
    if (cflag == kWhole || cflag == kLast) return;
    payload.append(reinterpret_cast<const char*>(&kMagic), sizeof kMagic);
    first = false;
  }
}

std::vector<IndexEntry> scan_index(std::shared_ptr<const ByteSource> source,
                                   const std::function<void(const FormatError&)>& on_damage) {
  ReaderOptions options;
  options.headers_only = true;
  options.on_damage = on_damage;
  Reader reader(std::move(source), options);
  std::vector<IndexEntry> entries;
  Record record;
  while (reader.next(record))
    entries.push_back({static_cast<int64_t>(entries.size()), record.offset});
  return entries;
}

}  // namespace recordio
