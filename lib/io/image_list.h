// Making image lists the way im2rec --list does, so mx-pack and im2rec give
// the same .lst files for the same folder:
//  * list_images walks the folder like os.walk (top-down, sorted names,
//    following links); with `recursive` every folder that holds images is a
//    class, labelled in the order it is first met; without, only the root's
//    own images are listed, all with label 0.
//  * make_splits shuffles (Python's generator, seed 100 by default) and cuts
//    the list into chunks and train/val/test parts with im2rec's names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recordio/list_file.h"

namespace mx {

struct ImageListOptions {
  bool recursive = true;
  std::vector<std::string> exts = {".jpeg", ".jpg", ".png"};  // matched case-insensitively
};

struct ImageList {
  std::vector<recordio::ListEntry> entries;  // paths relative to the root
  std::vector<std::string> classes;          // label -> folder relative to the root ("." for it)
};

ImageList list_images(const std::string& root, const ImageListOptions& options);

struct SplitOptions {
  bool shuffle = true;
  uint64_t seed = 100;  // im2rec's
  int chunks = 1;
  double train_ratio = 1.0;
  double test_ratio = 0.0;
};

struct Split {
  std::string suffix;  // appended to the output prefix: "", "_train", "_1_val", ...
  std::vector<recordio::ListEntry> entries;
};

// Throws InputError for ratios outside [0, 1], a sum above 1, or chunks < 1.
std::vector<Split> make_splits(std::vector<recordio::ListEntry> entries,
                               const SplitOptions& options);

}  // namespace mx
