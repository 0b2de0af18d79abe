#include "io/image_probe.h"

#include <cstdint>
#include <cstring>

namespace mx {
namespace {

uint32_t be16(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at]) << 8 |
                               static_cast<unsigned char>(b[at + 1]));
}
uint32_t be32(std::string_view b, size_t at) { return be16(b, at) << 16 | be16(b, at + 2); }
uint32_t le16(std::string_view b, size_t at) {
  return static_cast<uint32_t>(static_cast<unsigned char>(b[at]) |
                               static_cast<unsigned char>(b[at + 1]) << 8);
}
uint32_t le32(std::string_view b, size_t at) { return le16(b, at) | le16(b, at + 2) << 16; }

bool starts_with(std::string_view b, std::string_view prefix) {
  return b.size() >= prefix.size() && b.substr(0, prefix.size()) == prefix;
}

constexpr std::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);

std::optional<ImageInfo> probe_jpeg(std::string_view b) {
  size_t pos = 2;
  while (pos + 4 <= b.size()) {
    if (static_cast<unsigned char>(b[pos]) != 0xFF) return std::nullopt;
    while (pos < b.size() && static_cast<unsigned char>(b[pos]) == 0xFF) ++pos;  // fill bytes
    if (pos >= b.size()) return std::nullopt;
    const unsigned marker = static_cast<unsigned char>(b[pos]);
    ++pos;
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // no length
    if (marker == 0xD9 || marker == 0xDA) return std::nullopt;  // end or scan before a frame
    if (pos + 2 > b.size()) return std::nullopt;
    const uint32_t length = be16(b, pos);
    if (length < 2) return std::nullopt;
    const bool frame =
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
    if (frame) {
      if (length < 8 || pos + 8 > b.size()) return std::nullopt;
      ImageInfo info{"jpeg", static_cast<int>(be16(b, pos + 5)), static_cast<int>(be16(b, pos + 3)),
                     static_cast<unsigned char>(b[pos + 7])};
      if (info.width == 0 || info.height == 0 || info.channels == 0) return std::nullopt;
      return info;
    }
    pos += length;
  }
  return std::nullopt;
}

std::optional<ImageInfo> probe_png(std::string_view b) {
  if (b.size() < 26 || b.substr(12, 4) != "IHDR") return std::nullopt;
  const uint32_t width = be32(b, 16), height = be32(b, 20);
  int channels = 0;
  switch (static_cast<unsigned char>(b[25])) {
    case 0: channels = 1; break;
    case 2: channels = 3; break;
    case 3: channels = 3; break;  // palette
    case 4: channels = 2; break;
    case 6: channels = 4; break;
    default: return std::nullopt;
  }
  if (width == 0 || height == 0 || width > INT32_MAX || height > INT32_MAX) return std::nullopt;
  return ImageInfo{"png", static_cast<int>(width), static_cast<int>(height), channels};
}

}  // namespace

std::string guess_image_format(std::string_view b) {
  if (b.size() >= 3 && static_cast<unsigned char>(b[0]) == 0xFF &&
      static_cast<unsigned char>(b[1]) == 0xD8 && static_cast<unsigned char>(b[2]) == 0xFF)
    return "jpeg";
  if (starts_with(b, kPngSignature)) return "png";
  if (starts_with(b, "GIF87a") || starts_with(b, "GIF89a")) return "gif";
  if (starts_with(b, "BM")) return "bmp";
  if (starts_with(b, std::string_view("II*\0", 4)) || starts_with(b, std::string_view("MM\0*", 4)))
    return "tiff";
  if (b.size() >= 12 && starts_with(b, "RIFF") && b.substr(8, 4) == "WEBP") return "webp";
  if (b.size() >= 2 && b[0] == 'P' && b[1] >= '1' && b[1] <= '7') return "pnm";
  return "unknown";
}

bool known_image_format(std::string_view bytes) {
  // OpenCV has no GIF decoder: it would try the others' signatures on a GIF.
  const std::string format = guess_image_format(bytes);
  return format != "unknown" && format != "gif";
}

std::optional<ImageInfo> probe_image(std::string_view b) {
  const std::string format = guess_image_format(b);
  if (format == "jpeg") return probe_jpeg(b);
  if (format == "png") return probe_png(b);
  if (format == "gif" && b.size() >= 10) {
    ImageInfo info{"gif", static_cast<int>(le16(b, 6)), static_cast<int>(le16(b, 8)), 3};
    if (info.width > 0 && info.height > 0) return info;
  }
  if (format == "bmp" && b.size() >= 30) {
    const int32_t width = static_cast<int32_t>(le32(b, 18));
    int32_t height = static_cast<int32_t>(le32(b, 22));
    const uint32_t bits = le16(b, 28);
    if (height < 0 && height != INT32_MIN) height = -height;
    if (width > 0 && height > 0 && bits >= 8) return ImageInfo{"bmp", width, height, int(bits / 8)};
  }
  return std::nullopt;
}

}  // namespace mx
