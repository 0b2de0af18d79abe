// Token files (mx-pack text, TextIter): PREFIX.rec holds RecordIO records
// whose payloads are chunks of token ids, PREFIX.idx indexes them and
// PREFIX.vocab (vocabulary.h) names the ids. A payload, little-endian:
//   char[4] magic     "MXTK"
//   uint32  count     token ids that follow
//   uint64  document  the document the ids belong to (0, 1, ... in file order)
//   uint64  position  where the first id stands in its document
//   int32   ids[count]
// A document's ids fill one record or several consecutive ones. The file's
// token stream is the ids of all records in file order.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "recordio/byte_source.h"

namespace mx {

inline constexpr size_t kTokenHeaderSize = 24;
inline constexpr std::string_view kTokenMagic = "MXTK";
// Ids in one record at most: the payload stays below RecordIO's 2^29 bytes.
inline constexpr size_t kMaxRecordTokens = ((size_t{1} << 29) - 1 - kTokenHeaderSize) / 4;

struct TokenRecordHeader {
  uint32_t count = 0;
  uint64_t document = 0;
  uint64_t position = 0;
};

struct TokenRecordView {
  TokenRecordHeader header;
  std::string_view id_bytes;  // 4 * count bytes
  int32_t id(size_t i) const;
};

bool is_token_record(std::string_view payload);
void pack_token_record(const TokenRecordHeader& header, std::span<const int32_t> ids,
                       std::string& payload);
// Checks the magic, that count fills the payload exactly and that every id
// is in [0, vocab_size); InputError "FILE: byte OFFSET: ..." (the record's
// offset) otherwise.
TokenRecordView parse_token_record(std::string_view payload, const std::string& file,
                                   uint64_t record_offset, uint64_t vocab_size);

// A token file's records as their RecordIO headers give them (no payload is
// read): where each starts and how many ids it holds.
struct TokenFileLayout {
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> counts;
  uint64_t tokens = 0;  // in all
};
TokenFileLayout scan_token_file(std::shared_ptr<const recordio::ByteSource> source);

// Ids [begin, end) of the file's token stream, each checked against the
// vocabulary size; InputError naming the file and a record's offset when a
// record is damaged or not a token record.
std::vector<int32_t> read_tokens(std::shared_ptr<const recordio::ByteSource> source,
                                 const TokenFileLayout& layout, uint64_t begin, uint64_t end,
                                 uint64_t vocab_size);

// The vocabulary of a token file: REC with .vocab for .rec; when that file
// is missing and REC is PREFIX_train.rec, PREFIX_val.rec or PREFIX_test.rec
// (mx-pack text --val-ratio), PREFIX.vocab.
std::string vocabulary_path_for(const std::string& rec_path);

}  // namespace mx
