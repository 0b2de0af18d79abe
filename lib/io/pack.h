// mx-pack's core: turns list entries into image records on several threads
// and writes them, in list order, to a .rec and its .idx — the work of
// im2rec, with its options and its record layout (id = list index, id2 = 0).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "io/image_source.h"
#include "recordio/list_file.h"

namespace mx {

enum class ColorMode { kUnchanged = -1, kGray = 0, kColor = 1 };  // im2rec's --color

struct EncodeOptions {
  int resize = 0;  // the shorter side; 0 keeps the size
  bool center_crop = false;
  std::string encoding = ".jpg";  // ".jpg" or ".png"
  int quality = 95;               // JPEG quality 1..100, or PNG compression 0..9
  ColorMode color = ColorMode::kColor;
  bool pass_through = false;  // keep the file's bytes as they are
  bool pack_label = false;    // all of an entry's labels (flag n); else the first (flag 0)
};

// Checks option values and combinations; throws InputError.
void validate(const EncodeOptions& options, const ImageSource& source);

// The image record payload of one entry, as im2rec builds it: center crop,
// then resize of the shorter side, then encoding. Throws InputError naming
// the entry when the image cannot be read, decoded or encoded.
std::string encode_entry(const ImageSource& source, const recordio::ListEntry& entry,
                         const EncodeOptions& options);

struct PackProgress {
  uint64_t done = 0, total = 0;  // entries handled (packed or skipped), of all
  uint64_t bytes = 0;            // written to the .rec so far
  double seconds = 0;
};

struct PackResult {
  std::vector<recordio::ListEntry> packed;  // in .rec order
  std::vector<std::string> skipped;         // "NAME: reason", one per unreadable image
  uint64_t bytes = 0;
  uint64_t split_records = 0;  // payloads that contained the RecordIO magic
  double seconds = 0;
};

struct PackOptions {
  int threads = 1;
  // Stop at the first unreadable image (nothing is written); otherwise it is
  // reported through on_skip and left out.
  bool strict = false;
  std::function<void(const PackProgress&)> progress;
  std::function<void(const std::string&)> on_skip;
};

// Writes REC and IDX (atomically: temporary names until complete).
PackResult pack_records(const ImageSource& source, const std::vector<recordio::ListEntry>& entries,
                        const EncodeOptions& encode, const std::string& rec_path,
                        const std::string& idx_path, const PackOptions& options);

}  // namespace mx
