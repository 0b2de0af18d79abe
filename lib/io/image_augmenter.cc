#include "io/image_augmenter.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "base/error.h"
#include "io/image_codec.h"
#include "io/image_probe.h"

namespace mx {

ImageAugmenter::ImageAugmenter(const ImageAugmentConfig& config) : config_(config) {
  if (config_.channels != 1 && config_.channels != 3)
    throw InputError("image augmenter: " + std::to_string(config_.channels) +
                     " channels; images are decoded as gray (1) or color (3)");
  if (config_.height <= 0 || config_.width <= 0)
    throw InputError("image augmenter: the crop size must be positive");
  for (int c = 0; c < 3; ++c) {
    if (config_.std[c] == 0) throw InputError("image augmenter: std must not be 0");
    multiply_[c] = config_.scale / config_.std[c];
    add_[c] = -config_.mean[c] * config_.scale / config_.std[c];
  }
}

bool ImageAugmenter::decode_into(std::string_view encoded, Rng& rng, float* out) {
  if (encoded.empty() || encoded.size() > static_cast<size_t>(INT32_MAX) ||
      !known_image_format(encoded))
    return false;
  const cv::Mat image =
      decode_image(encoded, config_.channels == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
  if (image.empty()) return false;
  augment_into(image, rng, out);
  return true;
}

void ImageAugmenter::augment_into(const cv::Mat& input, Rng& rng, float* out) {
  MX_CHECK(input.depth() == CV_8U && input.channels() == config_.channels,
           "augment_into needs 8-bit images with ", config_.channels, " channel(s)");
  const int height = config_.height, width = config_.width;
  cv::Mat image = input;
  if (config_.resize > 0) {
    // MXNet's rule: the shorter side becomes `resize`, the longer one keeps
    // the aspect ratio (rounded down).
    cv::Size size;
    if (image.rows > image.cols)
      size = cv::Size(config_.resize, config_.resize * image.rows / image.cols);
    else
      size = cv::Size(config_.resize * image.cols / image.rows, config_.resize);
    if (size != image.size()) {
      cv::resize(image, resized_, size, 0, 0, cv::INTER_LINEAR);
      image = resized_;
    }
  }
  if (image.rows < height || image.cols < width) {
    const double factor =
        std::max(static_cast<double>(height) / image.rows, static_cast<double>(width) / image.cols);
    const cv::Size size(std::max(width, static_cast<int>(std::ceil(image.cols * factor))),
                        std::max(height, static_cast<int>(std::ceil(image.rows * factor))));
    cv::resize(image, resized_, size, 0, 0, cv::INTER_LINEAR);
    image = resized_;
  }
  int y = image.rows - height, x = image.cols - width;
  if (config_.rand_crop) {
    y = static_cast<int>(rng.uniform(static_cast<uint64_t>(y) + 1));
    x = static_cast<int>(rng.uniform(static_cast<uint64_t>(x) + 1));
  } else {
    y /= 2;
    x /= 2;
  }
  cv::Mat crop = image(cv::Rect(x, y, width, height));
  if (config_.rand_mirror && rng.coin()) {
    cv::flip(crop, flipped_, 1);
    crop = flipped_;
  }
  // Per channel: a strided view of the crop converted straight into the
  // batch slot (OpenCV vectorizes both steps).
  const size_t plane = static_cast<size_t>(height) * width;
  if (config_.channels == 1) {
    cv::Mat dst(height, width, CV_32F, out);
    crop.convertTo(dst, CV_32F, multiply_[0], add_[0]);
    return;
  }
  cv::split(crop, planes_);
  for (int c = 0; c < 3; ++c) {
    cv::Mat dst(height, width, CV_32F, out + c * plane);
    planes_[2 - c].convertTo(dst, CV_32F, multiply_[c], add_[c]);  // BGR -> RGB
  }
}

}  // namespace mx
