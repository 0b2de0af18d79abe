#include "io/image_source.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <opencv2/imgproc.hpp>
#include <sstream>

#include "base/error.h"

namespace mx {

void FolderSource::load(const recordio::ListEntry& entry, std::string& bytes, cv::Mat&) const {
  const std::string path = name(entry);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
  std::ostringstream content;
  content << in.rdbuf();
  bytes = std::move(content).str();
  if (bytes.empty()) {
    // Nothing read: an empty file, or one whose reads fail (which the
    // ifstream itself does not report).
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    throw InputError(path + (!ec && size > 0 ? ": read error" : ": the file is empty"));
  }
}

std::string FolderSource::name(const recordio::ListEntry& entry) const {
  return (std::filesystem::path(root_) / entry.path).string();
}

IdxSource::IdxSource(std::string path, IdxArray images)
    : path_(std::move(path)), images_(std::move(images)) {
  if (images_.dims.size() != 3)
    throw InputError(
        str(path_, ": ", images_.dims.size(), " dimensions; images must be (n, rows, cols)"));
}

void IdxSource::load(const recordio::ListEntry& entry, std::string&, cv::Mat& pixels) const {
  if (entry.index < 0 || entry.index >= images_.items())
    throw InputError(str(name(entry), ": no such item (the file has ", images_.items(), ")"));
  const size_t size = static_cast<size_t>(images_.item_size());
  cv::Mat view(static_cast<int>(images_.dims[1]), static_cast<int>(images_.dims[2]), CV_8U,
               const_cast<uint8_t*>(images_.data.data() + static_cast<size_t>(entry.index) * size));
  pixels = view;  // read-only use; the source outlives the packing
}

std::string IdxSource::name(const recordio::ListEntry& entry) const {
  return str(path_, " item ", entry.index);
}

CsvSource::CsvSource(std::string path, CsvTable table, int label_columns, int channels, int height,
                     int width)
    : path_(std::move(path)),
      table_(std::move(table)),
      label_columns_(label_columns),
      channels_(channels),
      height_(height),
      width_(width) {
  const int64_t pixels = int64_t{channels} * height * width;
  if (table_.rows > 0 && table_.cols != label_columns + pixels)
    throw InputError(str(path_, ":", table_.first_line, ": ", table_.cols, " columns, but ",
                         label_columns, " label column(s) and ", channels, "x", height, "x", width,
                         " pixels make ", label_columns + pixels));
}

void CsvSource::load(const recordio::ListEntry& entry, std::string&, cv::Mat& pixels) const {
  if (entry.index < 0 || entry.index >= table_.rows)
    throw InputError(str(name(entry), ": no such row"));
  const float* row = table_.row(entry.index) + label_columns_;
  cv::Mat image(height_, width_, channels_ == 3 ? CV_8UC3 : CV_8UC1);
  const int64_t count = int64_t{channels_} * height_ * width_;
  for (int64_t i = 0; i < count; ++i) {
    const float v = row[i];
    if (!(v >= 0 && v <= 255) || v != std::floor(v))
      throw InputError(str(name(entry), ": column ", label_columns_ + i + 1, ": ", v,
                           " is not a pixel value (an integer 0 to 255); mx-pack packs CSV rows "
                           "as images (use CSVIter for real-valued features)"));
    image.data[i] = static_cast<uint8_t>(v);
  }
  if (channels_ == 3) cv::cvtColor(image, image, cv::COLOR_RGB2BGR);  // OpenCV's order
  pixels = image;
}

std::string CsvSource::name(const recordio::ListEntry& entry) const {
  if (entry.index < 0 || entry.index >= table_.rows) return str(path_, " row ", entry.index);
  return str(path_, ":", table_.line_of(entry.index));
}

}  // namespace mx
