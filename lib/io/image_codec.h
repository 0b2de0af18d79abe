#pragma once
// Encoding and decoding of image files (JPEG, PNG, BMP, ...) in memory: the one
// place mx calls OpenCV's imgcodecs. A build configured with
// -DMX_USE_IMAGE_CODECS=OFF has no codecs (and does not need the ~150
// libraries imgcodecs pulls in): raw-pixel data (IDX, CSV, mx-pack's raw
// records) still works, and every call here says what is missing.
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>  // the IMREAD_ and IMWRITE_ flags (constants only)
#include <string>
#include <string_view>
#include <vector>

namespace mx {

// Whether this build can decode and encode image files.
bool image_codecs_built();

// The decoded image (8-bit; `imread_flags` as cv::imread's: IMREAD_COLOR,
// IMREAD_GRAYSCALE, IMREAD_UNCHANGED), or an empty Mat where `bytes` is not
// an image the codecs read. Throws InputError in a build without codecs.
cv::Mat decode_image(std::string_view bytes, int imread_flags);

// `image` encoded by extension (".jpg", ".png", ...) with cv::imwrite's
// parameters; false where the codec refuses it. Throws InputError where
// OpenCV reports an error (its message included) or the build has no codecs.
bool encode_image(const std::string& extension, const cv::Mat& image,
                  const std::vector<int>& params, std::vector<unsigned char>& out);

}  // namespace mx
