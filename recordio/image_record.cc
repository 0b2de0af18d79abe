#include "recordio/image_record.h"

#include "recordio/format_error.h"

namespace recordio {

static_assert(sizeof(float) == 4);

void pack_image_record(ImageRecordHeader header, std::span<const float> labels,
                       std::string_view image, std::string& payload) {
  if (labels.empty()) {
    header.flag = 0;
  } else {
    header.flag = static_cast<uint32_t>(labels.size());
    header.label = 0;
  }
  payload.clear();
  payload.reserve(kImageHeaderSize + labels.size_bytes() + image.size());
  const auto put = [&](const void* data, size_t size) {
    payload.append(static_cast<const char*>(data), size);
  };
  put(&header.flag, 4);
  put(&header.label, 4);
  put(&header.id, 8);
  put(&header.id2, 8);
  put(labels.data(), labels.size_bytes());
  payload.append(image);
}

std::string pack_image_record(ImageRecordHeader header, std::span<const float> labels,
                              std::string_view image) {
  std::string payload;
  pack_image_record(header, labels, image, payload);
  return payload;
}

ImageRecordView parse_image_record(std::string_view payload, const std::string& file,
                                   uint64_t record_offset) {
  const auto fail = [&](const std::string& what) {
    return FormatError(file, record_offset, "image record: " + what);
  };
  if (payload.size() < kImageHeaderSize)
    throw fail("the payload has " + std::to_string(payload.size()) +
               " bytes, fewer than the 24-byte image record header; is this an image .rec?");
  ImageRecordView view;
  std::memcpy(&view.header.flag, payload.data(), 4);
  std::memcpy(&view.header.label, payload.data() + 4, 4);
  std::memcpy(&view.header.id, payload.data() + 8, 8);
  std::memcpy(&view.header.id2, payload.data() + 16, 8);
  std::string_view rest = payload.substr(kImageHeaderSize);
  if (view.header.flag == 0) {
    view.num_labels = 1;
  } else {
    if (view.header.flag > rest.size() / 4)
      throw fail("the header announces " + std::to_string(view.header.flag) + " labels (" +
                 std::to_string(uint64_t{view.header.flag} * 4) + " bytes), but only " +
                 std::to_string(rest.size()) + " bytes follow it");
    view.num_labels = view.header.flag;
    view.label_bytes = rest.substr(0, size_t{view.header.flag} * 4);
    rest.remove_prefix(view.label_bytes.size());
  }
  view.image = rest;
  return view;
}

}  // namespace recordio
