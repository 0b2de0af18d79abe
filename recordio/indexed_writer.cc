#include "recordio/indexed_writer.h"

namespace recordio {

IndexedWriter::IndexedWriter(std::string rec_path, std::string idx_path)
    : rec_(std::move(rec_path)), idx_path_(std::move(idx_path)), writer_(rec_.stream()) {}

void IndexedWriter::write(int64_t key, std::string_view payload) {
  entries_.push_back({key, writer_.write(payload)});
}

void IndexedWriter::commit() {
  AtomicFile idx(idx_path_);
  write_index(idx.stream(), entries_);
  // The .rec first: an .idx never points into a file that is not there yet.
  rec_.commit();
  idx.commit();
}

}  // namespace recordio
