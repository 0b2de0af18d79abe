// Writes records in dmlc's framing, byte for byte what MXNet's
// MXRecordIO.write produces: payloads containing the magic at 4-byte-aligned
// offsets are split there (see record_format.h).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string_view>

namespace recordio {

class Writer {
 public:
  // `offset` is where `out` stands in its file (0 for a new file).
  explicit Writer(std::ostream& out, uint64_t offset = 0) : out_(out), offset_(offset) {}

  // Appends one record and returns its offset. Throws Error when the payload
  // is 2^29 bytes or longer, or when the stream fails.
  uint64_t write(std::string_view payload);

  uint64_t tell() const { return offset_; }
  // How many payloads had to be split because they contained the magic.
  uint64_t split_records() const { return split_records_; }

 private:
  void put(const void* data, size_t size);

  std::ostream& out_;
  uint64_t offset_;
  uint64_t split_records_ = 0;
};

}  // namespace recordio
