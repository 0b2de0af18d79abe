// IDX files (MNIST, Fashion-MNIST): big-endian header 0x00 0x00 TYPE NDIM,
// NDIM uint32 dimensions, then the values. Read plain or gzip-compressed
// (Debian's dataset-fashion-mnist ships the .gz files), unsigned bytes only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mx {

struct IdxArray {
  std::vector<int64_t> dims;  // dims[0] counts the items
  std::vector<uint8_t> data;

  int64_t items() const { return dims.empty() ? 0 : dims[0]; }
  // Values per item: the product of dims[1:].
  int64_t item_size() const;
};

// Reads the file; with max_items >= 0 only the first max_items items (the
// header's count is lowered to match). Malformed or truncated files throw
// InputError naming the file and the byte offset (in the uncompressed data
// for .gz files). Memory grows with the data actually read, never with what
// a header claims.
IdxArray read_idx(const std::string& path, int64_t max_items = -1);

}  // namespace mx
