// Format and size of an encoded image from its first bytes (JPEG, PNG, GIF,
// BMP), without decoding it: fast enough to list every image of a large .rec.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mx {

struct ImageInfo {
  std::string format;  // "jpeg", "png", "gif", "bmp"
  int width = 0, height = 0;
  int channels = 0;
};

// nullopt when the bytes start like none of these formats or their header
// is cut short or inconsistent.
std::optional<ImageInfo> probe_image(std::string_view bytes);

// "jpeg", "png", "gif", "bmp", "tiff", "webp", "pnm" by the first bytes
// alone, or "unknown".
std::string guess_image_format(std::string_view bytes);

// Whether the bytes start like one of those formats but GIF (which OpenCV
// cannot decode): what mx hands to OpenCV's decoder. OpenCV also takes
// formats no data set uses, some through libraries that trust their headers
// (a damaged GIF whose byte 128 began "DICM" went to the DICOM reader, which
// asked for 2.3 GB); a record or file in none of these formats is not an
// image mx decodes.
bool known_image_format(std::string_view bytes);

}  // namespace mx
