// mx-pack pack and list: a source (pack_sources.h) split into chunks and
// train/val/test parts (image_list.h), each packed into PREFIX*.rec + .idx
// (pack.h) with the .lst files when the list was made from a folder, and a
// summary of what was written on `out` (progress and skipped images on stderr).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "io/pack_sources.h"

namespace mx {

struct PackDatasetOptions {
  PackSourceOptions source;
  std::string prefix;  // outputs: PREFIX[_N][_train|_val|_test].rec, .idx, .lst
  // Splits (image_list.h's SplitOptions); shuffling is on by default for
  // folders and off for the other sources.
  std::optional<bool> shuffle;
  uint64_t seed = 100;
  int chunks = 1;
  double train_ratio = 1.0, test_ratio = 0.0;
  // Encoding (pack.h's EncodeOptions); unset values depend on the source:
  // image files are re-encoded as color JPEG, IDX and CSV pixels as PNG as stored.
  int resize = 0;
  bool center_crop = false;
  std::string encoding = "auto";
  std::optional<int> quality;
  std::optional<int> color;
  bool pass_through = false, pack_label = false;
  int threads = 0;  // 0: the thread budget
  bool strict = false, quiet = false;
};

// Packs the source; throws InputError for bad options or sources.
void pack_dataset(const PackDatasetOptions& options, std::ostream& out);
// Writes only the .lst files of a folder (im2rec --list).
void list_dataset(const PackDatasetOptions& options, std::ostream& out);

}  // namespace mx
