#include "io/image_codec.h"

#include <climits>

#include "base/error.h"

namespace mx {

#if MX_IMAGE_CODECS

bool image_codecs_built() { return true; }

cv::Mat decode_image(std::string_view bytes, int imread_flags) {
  if (bytes.empty() || bytes.size() > static_cast<size_t>(INT_MAX)) return cv::Mat();
  const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8U, const_cast<char*>(bytes.data()));
  try {
    // A fresh Mat each call: imdecode into a reused one leaves the previous
    // image there when decoding fails.
    return cv::imdecode(buffer, imread_flags);
  } catch (const cv::Exception&) {
    return cv::Mat();
  }
}

bool encode_image(const std::string& extension, const cv::Mat& image,
                  const std::vector<int>& params, std::vector<unsigned char>& out) {
  try {
    return cv::imencode(extension, image, out, params);
  } catch (const cv::Exception& e) {
    throw InputError(std::string("cannot encode as ") + extension + ": " + e.what());
  }
}

#else

namespace {
[[noreturn]] void no_codecs(const std::string& what) {
  throw InputError(what +
                   ": this build of mx has no image codecs (configured with "
                   "-DMX_USE_IMAGE_CODECS=OFF); raw-pixel data (IDX, CSV, raw records) "
                   "works, image files need a build with OpenCV's imgcodecs");
}
}  // namespace

bool image_codecs_built() { return false; }

cv::Mat decode_image(std::string_view, int) { no_codecs("cannot decode an image file"); }

bool encode_image(const std::string& extension, const cv::Mat&, const std::vector<int>&,
                  std::vector<unsigned char>&) {
  no_codecs("cannot encode as " + extension);
}

#endif

}  // namespace mx
