// Where mx-pack's examples come from: a folder of class folders, an im2rec
// .lst, an IDX image file paired with its label file, or a CSV table of
// label and pixel columns. Each is opened as list entries (id, labels, path)
// and the ImageSource that reads their images.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/image_source.h"
#include "recordio/list_file.h"

namespace mx {

struct PackSourceOptions {
  std::string path;
  std::string format = "auto";  // auto, folder, lst, idx or csv
  // Folders: walk sub-folders, each folder holding images is a class.
  bool recursive = true;
  std::string exts = ".jpeg,.jpg,.png";  // comma-separated, any case
  std::string root;                      // .lst: paths are relative to it (default: its folder)
  std::string labels;                    // IDX: the label file (default: found by name)
  int label_width = 1;                   // CSV: the first N columns are labels
  std::string shape;                     // CSV: "H,W" or "C,H,W" (default: a square)
  std::string csv_header = "auto";       // CSV: yes, no or auto
  int64_t limit = -1;                    // only the first N examples (-1: all)
};

struct PackSource {
  std::string format;  // what `path` was found to be
  std::unique_ptr<ImageSource> images;
  std::vector<recordio::ListEntry> entries;
  std::vector<std::string> classes;  // folders: label -> class folder
  bool made_list = false;            // listed from a folder (then .lst files are written)
  bool several_labels = false;       // CSV with more than one label column
};

// "folder", "lst", "csv" or "idx" from the file system and the name; throws
// InputError when `path` does not exist or cannot be told.
std::string detect_pack_format(const std::string& path);

// Opens the source (options.format "auto" is detected first); throws
// InputError naming the file for an empty or inconsistent source.
PackSource open_pack_source(const PackSourceOptions& options);

}  // namespace mx
