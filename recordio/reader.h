// Sequential reading of a RecordIO file, with multi-part records re-joined.
//
// Damage (a header without the magic, a length that runs past the end of the
// file, a continuation part without its first part, a file that ends inside a
// record) throws FormatError with the byte offset, unless an on_damage handler
// is given: then the handler is told (same message, plus where reading goes
// on) and the reader resynchronises at the next 4-byte-aligned magic that
// starts a whole record or a first part.
//
// A byte range [begin, end) selects the records whose first header starts in
// it; ranges that tile a file give disjoint shards that together hold every
// record (how distributed workers split a file without an index).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "recordio/byte_source.h"
#include "recordio/format_error.h"

namespace recordio {

struct Record {
  uint64_t offset = 0;        // first byte of the record's (first) header
  uint64_t end = 0;           // one past its last padding byte
  uint32_t parts = 0;         // 1, or the number of parts it was split into
  uint64_t payload_size = 0;  // the joined payload's length
  // The joined payload; valid until the next call on the reader. Empty when
  // the reader was opened with headers_only.
  std::string_view payload;
};

struct ReaderOptions {
  uint64_t begin = 0;
  uint64_t end = std::numeric_limits<uint64_t>::max();
  // Called for each damaged region instead of throwing; reading resumes at
  // the next record start.
  std::function<void(const FormatError&)> on_damage;
  // Skip payloads (for listing offsets and sizes): reads only the headers.
  bool headers_only = false;
  size_t buffer_size = size_t{1} << 20;
};

class Reader {
 public:
  Reader(std::shared_ptr<const ByteSource> source, ReaderOptions options = {});
  explicit Reader(const std::string& path, ReaderOptions options = {});

  // The next record of the range; false at the end.
  bool next(Record& record);
  // Goes on at `offset`, which must be a record start (e.g. from an index).
  void seek(uint64_t offset);

  const std::string& name() const { return source_->name(); }
  uint64_t file_size() const { return size_; }
  // Damaged regions met so far and the bytes they covered.
  uint64_t damaged_regions() const { return damaged_regions_; }
  uint64_t damaged_bytes() const { return damaged_bytes_; }

 private:
  // Makes [pos_, pos_ + n) available in the buffer; returns how much is
  // (less than n only at the end of the file).
  size_t fill(uint64_t n);
  const char* at(uint64_t offset) const { return buffer_.data() + (offset - buffer_offset_); }
  // Whether a valid header of a whole record or a first part starts at
  // `offset` (given its 8 bytes).
  bool starts_record(const char* header, uint64_t offset) const;
  // The first record start at or after `from` (rounded up to 4), or size_.
  uint64_t find_record_start(uint64_t from);
  // Throws a FormatError at `at`, or (with on_damage) reports it and moves
  // to the first record start at or after `resume_from`; `lost_from` is
  // where the bytes that no record will return begin.
  void damage(uint64_t at, const std::string& what, uint64_t resume_from, uint64_t lost_from);

  std::shared_ptr<const ByteSource> source_;
  ReaderOptions options_;
  uint64_t size_;
  uint64_t pos_ = 0;  // next header
  std::vector<char> buffer_;
  uint64_t buffer_offset_ = 0;  // file offset of buffer_[0]
  size_t buffer_fill_ = 0;
  std::string joined_;  // multi-part payloads
  uint64_t damaged_regions_ = 0, damaged_bytes_ = 0;
};

}  // namespace recordio
