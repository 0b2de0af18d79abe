// Writes a .rec and its .idx together (what MXIndexedRecordIO writes), both
// through temporary files that are renamed into place by commit(): an
// interrupted run never leaves a partial file under either name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "recordio/atomic_file.h"
#include "recordio/index_file.h"
#include "recordio/writer.h"

namespace recordio {

class IndexedWriter {
 public:
  IndexedWriter(std::string rec_path, std::string idx_path);

  // Appends a record and its index line "key\toffset".
  void write(int64_t key, std::string_view payload);
  // Writes the .idx, then renames the .rec and the .idx into place.
  void commit();

  uint64_t records() const { return entries_.size(); }
  uint64_t bytes() const { return writer_.tell(); }
  uint64_t split_records() const { return writer_.split_records(); }
  const std::vector<IndexEntry>& entries() const { return entries_; }

 private:
  AtomicFile rec_;
  std::string idx_path_;
  Writer writer_;
  std::vector<IndexEntry> entries_;
};

}  // namespace recordio
