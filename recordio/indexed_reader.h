// Random access to the records of a .rec through its .idx. Reads are
// positional, so one reader serves several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "recordio/byte_source.h"
#include "recordio/format_error.h"
#include "recordio/index_file.h"

namespace recordio {

class IndexedReader {
 public:
  // Checks every offset against the file (inside it, 4-byte aligned); a bad
  // entry throws FormatError naming `index_name` and the entry's line.
  IndexedReader(std::shared_ptr<const ByteSource> source, std::vector<IndexEntry> index,
                const std::string& index_name);
  // Opens REC with the entries of IDX.
  static IndexedReader open(const std::string& rec_path, const std::string& idx_path);

  const std::string& name() const { return source_->name(); }
  const std::vector<IndexEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }

  // The payload of entry i (re-joined if it was split). Throws FormatError
  // when there is no intact record at the entry's offset.
  void read(size_t i, std::string& payload) const { read_at(entries_[i].offset, payload); }
  void read_at(uint64_t offset, std::string& payload) const;

 private:
  std::shared_ptr<const ByteSource> source_;
  std::vector<IndexEntry> entries_;
};

// Builds an index by walking the record headers of a file (keys 0, 1, ...),
// for files that come without one. Damage throws, or with `on_damage` is
// reported and skipped (see Reader).
std::vector<IndexEntry> scan_index(std::shared_ptr<const ByteSource> source,
                                   const std::function<void(const FormatError&)>& on_damage = {});

}  // namespace recordio
