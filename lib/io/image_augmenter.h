// Decoding and augmentation of one image into a batch slot: resize of the
// shorter side, random or center crop, random mirror, then (pixel - mean) /
// std * scale per channel, written as float32 CHW in RGB order — what MXNet's
// ImageRecordIter does with the same parameters. One augmenter per thread:
// it keeps its resize and flip buffers between images.
#pragma once

#include <opencv2/core.hpp>
#include <string_view>
#include <vector>

#include "io/random.h"

namespace mx {

struct ImageAugmentConfig {
  int channels = 3;  // 1 (decoded as gray) or 3 (decoded as color)
  int height = 224, width = 224;
  int resize = -1;  // the shorter side before cropping; <= 0 keeps the size
  bool rand_crop = false;
  bool rand_mirror = false;
  float mean[3] = {0, 0, 0};  // r, g, b
  float std[3] = {1, 1, 1};
  float scale = 1;
};

class ImageAugmenter {
 public:
  explicit ImageAugmenter(const ImageAugmentConfig& config);

  // Decodes `encoded` (JPEG, PNG, anything OpenCV reads) and writes
  // channels x height x width floats to `out`. False when the bytes are not
  // an image OpenCV can decode.
  bool decode_into(std::string_view encoded, Rng& rng, float* out);
  // The same for an image already decoded (8-bit BGR or gray). An image
  // smaller than the crop, after resizing, is scaled up to cover it.
  // Random numbers are drawn in a fixed order: crop row, crop column, mirror.
  void augment_into(const cv::Mat& image, Rng& rng, float* out);

  const ImageAugmentConfig& config() const { return config_; }

 private:
  ImageAugmentConfig config_;
  float multiply_[3], add_[3];
  cv::Mat resized_, flipped_;
  std::vector<cv::Mat> planes_;
};

}  // namespace mx
