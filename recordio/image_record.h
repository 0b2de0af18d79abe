// MXNet's image records (mx.recordio.pack / unpack, im2rec): the payload is
//   uint32 flag; float32 label; uint64 id; uint64 id2;   (24 bytes)
//   flag float32 labels when flag > 0;
//   the encoded image (JPEG, PNG, ... or raw bytes with im2rec --pass-through).
// With flag 0 the single label is the header's; with flag > 0 the header's
// label is unused (MXNet writes 0) and the labels follow.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace recordio {

inline constexpr size_t kImageHeaderSize = 24;

struct ImageRecordHeader {
  uint32_t flag = 0;
  float label = 0;
  uint64_t id = 0;
  uint64_t id2 = 0;
};

// A parsed record; the views point into the payload it was parsed from.
struct ImageRecordView {
  ImageRecordHeader header;
  uint32_t num_labels = 0;       // 1 when flag is 0, else flag
  std::string_view label_bytes;  // flag * 4 bytes; empty when flag is 0
  std::string_view image;

  float label(uint32_t i) const {
    if (header.flag == 0) return header.label;
    float value;
    std::memcpy(&value, label_bytes.data() + 4 * size_t{i}, sizeof value);
    return value;
  }
};

// Builds a payload the way mx.recordio.pack does: with no `labels` the header
// is written as given but with flag 0 (a single label in header.label); with
// labels, flag = labels.size() and label = 0, then the labels.
void pack_image_record(ImageRecordHeader header, std::span<const float> labels,
                       std::string_view image, std::string& payload);
std::string pack_image_record(ImageRecordHeader header, std::span<const float> labels,
                              std::string_view image);

// Parses a payload; a short payload or a label count that does not fit
// throws FormatError naming `file` and `record_offset` (the record's first
// byte in its file).
ImageRecordView parse_image_record(std::string_view payload, const std::string& file,
                                   uint64_t record_offset);

}  // namespace recordio
