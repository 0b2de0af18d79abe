// Where mx-pack gets the images of list entries: files under a root folder
// (folder and .lst sources), or pixels held in memory (IDX and CSV sources).
#pragma once

#include <opencv2/core.hpp>
#include <string>

#include "io/csv_table.h"
#include "io/idx_file.h"
#include "recordio/list_file.h"

namespace mx {

class ImageSource {
 public:
  virtual ~ImageSource() = default;
  // Fills `bytes` (an encoded image file) or `pixels` (8-bit gray or BGR) for
  // the entry. Throws InputError naming the entry when it cannot. Called
  // from several threads at once.
  virtual void load(const recordio::ListEntry& entry, std::string& bytes,
                    cv::Mat& pixels) const = 0;
  // How the entry is named in messages: its path, or "FILE item N".
  virtual std::string name(const recordio::ListEntry& entry) const = 0;
  // False for pixel sources: there are no original bytes to pass through.
  virtual bool has_files() const = 0;
};

// Image files named by entry.path, relative to `root`.
class FolderSource final : public ImageSource {
 public:
  explicit FolderSource(std::string root) : root_(std::move(root)) {}
  void load(const recordio::ListEntry& entry, std::string& bytes, cv::Mat& pixels) const override;
  std::string name(const recordio::ListEntry& entry) const override;
  bool has_files() const override { return true; }

 private:
  std::string root_;
};

// Item entry.index of an IDX image file (n, rows, cols): gray images.
class IdxSource final : public ImageSource {
 public:
  IdxSource(std::string path, IdxArray images);
  void load(const recordio::ListEntry& entry, std::string& bytes, cv::Mat& pixels) const override;
  std::string name(const recordio::ListEntry& entry) const override;
  bool has_files() const override { return false; }

 private:
  std::string path_;
  IdxArray images_;
};

// Row entry.index of a CSV table: the columns after the first `label_columns`
// are pixels (integers 0..255) of an image of `channels` x `height` x `width`,
// row by row; with 3 channels each pixel is three columns R, G, B.
class CsvSource final : public ImageSource {
 public:
  CsvSource(std::string path, CsvTable table, int label_columns, int channels, int height,
            int width);
  void load(const recordio::ListEntry& entry, std::string& bytes, cv::Mat& pixels) const override;
  std::string name(const recordio::ListEntry& entry) const override;
  bool has_files() const override { return false; }

 private:
  std::string path_;
  CsvTable table_;
  int label_columns_, channels_, height_, width_;
};

}  // namespace mx
