// Feeds arbitrary bytes to the image-record parser, the image header probe,
// and (for images of a sane size) the decoder and augmentation of
// ImageRecordIter. Each must return or throw recordio::FormatError; never
// crash or read outside the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/image_augmenter.h"
#include "io/image_probe.h"
#include "recordio/format_error.h"
#include "recordio/image_record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  recordio::ImageRecordView view;
  try {
    view = recordio::parse_image_record(bytes, "fuzz.rec", 0);
  } catch (const recordio::FormatError&) {
    // Not a record: still probe and decode the bytes as an image.
    view.image = bytes;
  }
  float sum = 0;
  for (uint32_t i = 0; i < view.num_labels; ++i) sum += view.label(i);
  (void)sum;

  const auto info = mx::probe_image(view.image);
  mx::guess_image_format(view.image);
  // Decoding allocates what the header says; keep to images a data set can
  // hold so the fuzzer's memory limit measures our code, not OpenCV's.
  if (info && int64_t{info->width} * info->height <= (int64_t{1} << 20)) {
    mx::ImageAugmentConfig config;
    config.height = 8;
    config.width = 8;
    config.resize = 10;
    config.rand_crop = true;
    config.rand_mirror = true;
    mx::ImageAugmenter augmenter(config);
    std::vector<float> out(3 * 8 * 8);
    mx::Rng rng(size);
    augmenter.decode_into(view.image, rng, out.data());
  }
  return 0;
}
