#include "io/token_records.h"

#include <bit>
#include <cstring>
#include <filesystem>

#include "base/error.h"
#include "io/recordio_errors.h"
#include "recordio/reader.h"

namespace fs = std::filesystem;

namespace mx {

static_assert(std::endian::native == std::endian::little,
              "token records are little-endian and read in place");

int32_t TokenRecordView::id(size_t i) const {
  int32_t value;
  std::memcpy(&value, id_bytes.data() + 4 * i, sizeof value);
  return value;
}

bool is_token_record(std::string_view payload) { return payload.starts_with(kTokenMagic); }

void pack_token_record(const TokenRecordHeader& header, std::span<const int32_t> ids,
                       std::string& payload) {
  MX_CHECK(header.count == ids.size());
  payload.clear();
  payload.reserve(kTokenHeaderSize + ids.size_bytes());
  payload.append(kTokenMagic);
  const auto put = [&](const void* data, size_t size) {
    payload.append(static_cast<const char*>(data), size);
  };
  put(&header.count, 4);
  put(&header.document, 8);
  put(&header.position, 8);
  put(ids.data(), ids.size_bytes());
}

TokenRecordView parse_token_record(std::string_view payload, const std::string& file,
                                   uint64_t record_offset, uint64_t vocab_size) {
  const auto fail = [&](const std::string& what) {
    return InputError(str(file, ": byte ", record_offset, ": token record: ", what));
  };
  if (payload.size() < kTokenHeaderSize || !is_token_record(payload))
    throw fail(str("the payload (", payload.size(),
                   " bytes) does not start with the 24-byte header of a token record (magic "
                   "MXTK); is this a token .rec from mx-pack text?"));
  TokenRecordView view;
  std::memcpy(&view.header.count, payload.data() + 4, 4);
  std::memcpy(&view.header.document, payload.data() + 8, 8);
  std::memcpy(&view.header.position, payload.data() + 16, 8);
  view.id_bytes = payload.substr(kTokenHeaderSize);
  if (view.id_bytes.size() != uint64_t{view.header.count} * 4)
    throw fail(str("the header announces ", view.header.count, " ids (",
                   uint64_t{view.header.count} * 4, " bytes), but ", view.id_bytes.size(),
                   " bytes follow it"));
  for (size_t i = 0; i < view.header.count; ++i) {
    const int32_t id = view.id(i);
    if (id < 0 || static_cast<uint64_t>(id) >= vocab_size)
      throw fail(str("id ", i, " of document ", view.header.document, " is ", id,
                     ", outside the vocabulary's ", vocab_size, " tokens"));
  }
  return view;
}

TokenFileLayout scan_token_file(std::shared_ptr<const recordio::ByteSource> source) {
  const std::string name = source->name();
  recordio::ReaderOptions options;
  options.headers_only = true;
  recordio::Reader reader(std::move(source), options);
  TokenFileLayout layout;
  recordio::Record record;
  while (with_recordio_errors([&] { return reader.next(record); })) {
    const uint64_t size = record.payload_size;
    if (size < kTokenHeaderSize || (size - kTokenHeaderSize) % 4 != 0)
      throw InputError(str(name, ": byte ", record.offset, ": a payload of ", size,
                           " bytes is not a token record (24-byte header, 4 bytes per id); is "
                           "this a token .rec from mx-pack text?"));
    layout.offsets.push_back(record.offset);
    layout.counts.push_back((size - kTokenHeaderSize) / 4);
    layout.tokens += layout.counts.back();
  }
  return layout;
}

std::vector<int32_t> read_tokens(std::shared_ptr<const recordio::ByteSource> source,
                                 const TokenFileLayout& layout, uint64_t begin, uint64_t end,
                                 uint64_t vocab_size) {
  MX_CHECK(begin <= end && end <= layout.tokens);
  std::vector<int32_t> ids;
  ids.reserve(end - begin);
  const std::string name = source->name();
  recordio::Reader reader(std::move(source));
  uint64_t first = 0;  // stream position of record r's first id
  for (size_t r = 0; r < layout.counts.size() && first < end; first += layout.counts[r++]) {
    const uint64_t last = first + layout.counts[r];
    if (last <= begin) continue;
    reader.seek(layout.offsets[r]);
    recordio::Record record;
    if (!with_recordio_errors([&] { return reader.next(record); }) ||
        record.offset != layout.offsets[r])
      throw InputError(str(name, ": byte ", layout.offsets[r],
                           ": the record is gone (the file changed while it was read)"));
    const TokenRecordView view =
        parse_token_record(record.payload, name, record.offset, vocab_size);
    if (view.header.count != layout.counts[r])
      throw InputError(
          str(name, ": byte ", record.offset, ": the record changed while it was read"));
    const uint64_t from = std::max(first, begin) - first, to = std::min(last, end) - first;
    const size_t old = ids.size();
    ids.resize(old + (to - from));
    std::memcpy(ids.data() + old, view.id_bytes.data() + 4 * from, 4 * (to - from));
  }
  return ids;
}

std::string vocabulary_path_for(const std::string& rec_path) {
  const fs::path rec(rec_path);
  const fs::path beside = fs::path(rec).replace_extension(".vocab");
  std::error_code ec;
  if (fs::exists(beside, ec)) return beside.string();
  const std::string stem = rec.stem().string();
  for (const std::string suffix : {"_train", "_val", "_test"}) {
    if (stem.size() > suffix.size() && stem.ends_with(suffix)) {
      const fs::path shared =
          rec.parent_path() / (stem.substr(0, stem.size() - suffix.size()) + ".vocab");
      if (fs::exists(shared, ec)) return shared.string();
    }
  }
  return beside.string();
}

}  // namespace mx
