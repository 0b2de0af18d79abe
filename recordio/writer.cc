#include "recordio/writer.h"

#include <ostream>
#include <string>

#include "recordio/format_error.h"
#include "recordio/record_format.h"

namespace recordio {

void Writer::put(const void* data, size_t size) {
  out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out_)
    throw Error("RecordIO write failed at byte " + std::to_string(offset_) + " (disk full?)");
  offset_ += size;
}

uint64_t Writer::write(std::string_view payload) {
  if (payload.size() > kMaxLength)
    throw Error("a RecordIO record must be shorter than 2^29 bytes; this one has " +
                std::to_string(payload.size()));
  const uint64_t start = offset_;
  const uint32_t size = static_cast<uint32_t>(payload.size());
  const auto write_part = [&](uint32_t cflag, uint32_t begin, uint32_t end) {
    const uint32_t header[2] = {kMagic, encode_lrec(cflag, end - begin)};
    put(header, sizeof header);
    if (end > begin) put(payload.data() + begin, end - begin);
  };
  // Split at every aligned magic; the magic itself is not written (the
  // reader puts it back between the parts).
  uint32_t part_begin = 0;
  bool split = false;
  for (uint32_t i = 0; i + 4 <= size; i += 4) {
    if (load_u32(payload.data() + i) != kMagic) continue;
    write_part(split ? kMiddle : kFirst, part_begin, i);
    part_begin = i + 4;
    split = true;
  }
  write_part(split ? kLast : kWhole, part_begin, size);
  static constexpr char kZeros[4] = {0, 0, 0, 0};
  const uint32_t pad = static_cast<uint32_t>(padded_length(size) - size);
  if (pad != 0) put(kZeros, pad);
  if (split) ++split_records_;
  return start;
}

}  // namespace recordio
