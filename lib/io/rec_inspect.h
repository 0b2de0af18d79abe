// What is in a .rec, and is it sound: record count, sizes, label histogram,
// image formats and sizes (or, for token records of mx-pack text, documents,
// tokens and ids checked against the vocabulary), damaged regions and bad
// records with their byte offsets, and whether a .idx matches the file. With
// `decode`, every image is decoded (on several threads) to find those OpenCV
// cannot read.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mx {

struct InspectOptions {
  std::string idx_path;  // "" for none
  bool decode = false;
  int threads = 1;
  // Token records: ids must be below this (0: only checked to be >= 0).
  uint64_t vocab_size = 0;
  std::function<void(uint64_t bytes_done, uint64_t bytes_total)> progress;
};

struct InspectReport {
  std::string rec_path, idx_path;
  uint64_t file_size = 0;
  uint64_t records = 0;
  uint64_t payload_bytes = 0;
  uint64_t split_records = 0;  // records written in parts (their payload held the magic)
  uint64_t damaged_bytes = 0;
  std::vector<std::string> damaged;      // "FILE: byte N: ..." per damaged region
  std::vector<std::string> bad_records;  // not image records, unknown or undecodable images
  uint64_t image_records = 0;
  std::map<uint32_t, uint64_t> label_widths;      // labels per record -> records
  std::map<float, uint64_t> labels;               // first label -> records
  std::map<std::string, uint64_t> formats;        // "jpeg", "png", ... -> records
  std::map<std::pair<int, int>, uint64_t> sizes;  // (width, height) -> images
  std::map<int, uint64_t> channels;
  uint64_t decoded = 0;  // images decoded (with `decode`)
  // Token records (mx-pack text).
  std::string vocab_path;  // the vocabulary they were checked against, if any
  uint64_t vocab_size = 0;
  uint64_t token_records = 0, documents = 0, tokens = 0;
  int32_t max_id = -1;
  // The .idx check.
  uint64_t index_entries = 0;
  std::vector<std::string> index_problems;
  uint64_t unindexed_records = 0;

  bool ok() const {
    return damaged.empty() && bad_records.empty() && index_problems.empty() &&
           unindexed_records == 0;
  }
};

// Throws InputError only when the files cannot be opened or the .idx does
// not parse; problems inside the .rec are collected in the report.
InspectReport inspect_rec(const std::string& rec_path, const InspectOptions& options);

// A human-readable report; `limit` caps each listing (problems, sizes, labels).
void print_report(std::ostream& out, const InspectReport& report, size_t limit = 20);

// mx-pack inspect and verify: inspects REC with its index (`idx_path`, or
// REC's name with .idx when that file exists; none with `no_idx`) and, when
// it holds token records, its vocabulary (token_records.h), prints
// the report and throws InputError counting the problems when it is not
// sound. `threads` 0 means the thread budget.
void check_rec(std::ostream& out, const std::string& rec_path, const std::string& idx_path,
               bool no_idx, bool decode, int threads, size_t limit);

}  // namespace mx
