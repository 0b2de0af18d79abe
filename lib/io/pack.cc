#include "io/pack.h"

#include <chrono>
#include <opencv2/imgproc.hpp>

#include "base/error.h"
#include "io/image_codec.h"
#include "io/image_probe.h"
#include "io/ordered_pipeline.h"
#include "io/recordio_errors.h"
#include "recordio/image_record.h"
#include "recordio/indexed_writer.h"

namespace mx {
namespace {

// Entries handed to a worker at once: enough to keep locking rare.
constexpr size_t kChunk = 16;

int imread_flag(ColorMode color) {
  switch (color) {
    case ColorMode::kGray: return cv::IMREAD_GRAYSCALE;
    case ColorMode::kUnchanged: return cv::IMREAD_UNCHANGED;
    case ColorMode::kColor: break;
  }
  return cv::IMREAD_COLOR;
}

cv::Mat decode(const std::string& bytes, ColorMode color) {
  if (!known_image_format(bytes)) return cv::Mat();
  return decode_image(bytes, imread_flag(color));
}

// Pixels from IDX or CSV: convert to the asked color mode.
cv::Mat convert_color(const cv::Mat& pixels, ColorMode color) {
  cv::Mat out;
  if (color == ColorMode::kColor && pixels.channels() == 1) {
    cv::cvtColor(pixels, out, cv::COLOR_GRAY2BGR);
    return out;
  }
  if (color == ColorMode::kGray && pixels.channels() == 3) {
    cv::cvtColor(pixels, out, cv::COLOR_BGR2GRAY);
    return out;
  }
  return pixels;
}

cv::Mat transform(cv::Mat image, const EncodeOptions& options) {
  if (options.center_crop) {
    if (image.rows > image.cols)
      image = image(cv::Rect(0, (image.rows - image.cols) / 2, image.cols, image.cols));
    else
      image = image(cv::Rect((image.cols - image.rows) / 2, 0, image.rows, image.rows));
  }
  if (options.resize > 0) {
    cv::Size size = image.rows > image.cols
                        ? cv::Size(options.resize, image.rows * options.resize / image.cols)
                        : cv::Size(image.cols * options.resize / image.rows, options.resize);
    cv::Mat resized;
    cv::resize(image, resized, size);
    image = resized;
  }
  return image;
}

struct Encoded {
  std::string payload;
  std::string error;  // "NAME: reason" when the entry could not be packed
};

}  // namespace

void validate(const EncodeOptions& options, const ImageSource& source) {
  if (options.encoding != ".jpg" && options.encoding != ".png")
    throw InputError("encoding '" + options.encoding + "' is not '.jpg' or '.png'");
  if (options.encoding == ".jpg" && (options.quality < 1 || options.quality > 100))
    throw InputError(str("JPEG quality ", options.quality, " is outside 1..100"));
  if (options.encoding == ".png" && (options.quality < 0 || options.quality > 9))
    throw InputError(str("PNG compression ", options.quality, " is outside 0..9"));
  if (options.resize < 0) throw InputError(str("resize ", options.resize, " is negative"));
  if (options.pass_through && !source.has_files())
    throw InputError("pass-through keeps the bytes of image files; IDX and CSV sources have none");
  if (options.pass_through && (options.resize > 0 || options.center_crop))
    throw InputError(
        "pass-through keeps images as they are; it cannot be combined with resize "
        "or center crop");
}

std::string encode_entry(const ImageSource& source, const recordio::ListEntry& entry,
                         const EncodeOptions& options) {
  if (entry.labels.empty()) throw InputError(source.name(entry) + ": the entry has no label");
  recordio::ImageRecordHeader header{0, entry.labels[0], static_cast<uint64_t>(entry.index), 0};
  std::span<const float> labels;
  if (options.pack_label && entry.labels.size() > 1) labels = entry.labels;

  std::string bytes;
  cv::Mat pixels;
  source.load(entry, bytes, pixels);
  if (options.pass_through) {
    if (!probe_image(bytes) && decode(bytes, ColorMode::kUnchanged).empty())
      throw InputError(source.name(entry) + ": not an image OpenCV can read (" +
                       std::to_string(bytes.size()) + " bytes)");
    return recordio::pack_image_record(header, labels, bytes);
  }
  cv::Mat image;
  if (!bytes.empty()) {
    image = decode(bytes, options.color);
    if (image.empty())
      throw InputError(source.name(entry) + ": cannot decode the image (" +
                       std::to_string(bytes.size()) + " bytes, format " +
                       guess_image_format(bytes) + ")");
  } else {
    image = convert_color(pixels, options.color);
  }
  image = transform(image, options);
  const std::vector<int> params =
      options.encoding == ".jpg" ? std::vector<int>{cv::IMWRITE_JPEG_QUALITY, options.quality}
                                 : std::vector<int>{cv::IMWRITE_PNG_COMPRESSION, options.quality};
  std::vector<uchar> encoded;
  bool ok = false;
  try {
    ok = encode_image(options.encoding, image, params, encoded);
  } catch (const InputError& e) {
    throw InputError(source.name(entry) + ": " + e.what());
  }
  if (!ok) throw InputError(source.name(entry) + ": cannot encode as " + options.encoding);
  return recordio::pack_image_record(
      header, labels,
      std::string_view(reinterpret_cast<const char*>(encoded.data()), encoded.size()));
}

PackResult pack_records(const ImageSource& source, const std::vector<recordio::ListEntry>& entries,
                        const EncodeOptions& encode, const std::string& rec_path,
                        const std::string& idx_path, const PackOptions& options) {
  validate(encode, source);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  auto writer = with_recordio_errors(
      [&] { return std::make_unique<recordio::IndexedWriter>(rec_path, idx_path); });
  size_t next = 0;
  OrderedPipeline<std::pair<size_t, size_t>, std::vector<Encoded>> pipeline(
      [&]() -> std::optional<std::pair<size_t, size_t>> {
        if (next >= entries.size()) return std::nullopt;
        const size_t begin = next;
        next = std::min(entries.size(), next + kChunk);
        return std::make_pair(begin, next);
      },
      [&](std::pair<size_t, size_t>&& range, int) {
        std::vector<Encoded> out(range.second - range.first);
        for (size_t i = range.first; i < range.second; ++i) {
          try {
            out[i - range.first].payload = encode_entry(source, entries[i], encode);
          } catch (const Error& e) {
            out[i - range.first].error = e.what();
          }
        }
        return out;
      },
      options.threads, 2 * options.threads + 2);

  PackResult result;
  size_t done = 0;
  while (auto chunk = pipeline.next()) {
    for (auto& item : *chunk) {
      const recordio::ListEntry& entry = entries[done++];
      if (!item.error.empty()) {
        if (options.strict)
          throw InputError(item.error +
                           " (stopped: nothing was written; leave out --strict "
                           "to skip unreadable images)");
        if (options.on_skip) options.on_skip(item.error);
        result.skipped.push_back(std::move(item.error));
        continue;
      }
      with_recordio_errors([&] { writer->write(entry.index, item.payload); });
      result.packed.push_back(entry);
    }
    if (options.progress) options.progress({done, entries.size(), writer->bytes(), elapsed()});
  }
  if (result.packed.empty() && !entries.empty())
    throw InputError(str("none of the ", entries.size(), " images could be packed (the first: ",
                         result.skipped.front(), "); nothing was written"));
  with_recordio_errors([&] { writer->commit(); });
  result.bytes = writer->bytes();
  result.split_records = writer->split_records();
  result.seconds = elapsed();
  return result;
}

}  // namespace mx
