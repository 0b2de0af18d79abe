#include "kvstore/packing.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace mx::kvstore {
namespace {

constexpr int64_t kAlign = 8;

int64_t padded(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

int64_t packed_entry_bytes(int64_t payload) {
  return static_cast<int64_t>(sizeof(Header)) + padded(payload);
}

int64_t max_packed_message_bytes() { return packed_entry_bytes(kMaxPackBytes); }

PackBytes PackBytes::make(int64_t size) {
  MX_CHECK(size >= 0);
  PackBytes b;
  b.data.reset(new std::byte[static_cast<size_t>(size)]);
  b.size = size;
  return b;
}

void PackWriter::reserve(int64_t bytes) {
  const int64_t needed = bytes_.size + bytes;
  if (needed <= capacity_) return;
  PackBytes grown = PackBytes::make(std::max(needed, capacity_ * 2));
  if (bytes_.size > 0)
    std::memcpy(grown.data.get(), bytes_.data.get(), static_cast<size_t>(bytes_.size));
  capacity_ = grown.size;
  grown.size = bytes_.size;
  bytes_ = std::move(grown);
}

void PackWriter::add(const Header& h, const void* data) {
  MX_CHECK(h.bytes >= 0 && (h.bytes == 0 || data != nullptr));
  const int64_t entry = packed_entry_bytes(h.bytes);
  reserve(entry);
  std::byte* at = bytes_.data.get() + bytes_.size;
  std::memcpy(at, &h, sizeof(Header));
  if (h.bytes > 0) std::memcpy(at + sizeof(Header), data, static_cast<size_t>(h.bytes));
  // The padding is sent too: zeros, never stale memory.
  const auto written = static_cast<int64_t>(sizeof(Header)) + h.bytes;
  std::memset(at + written, 0, static_cast<size_t>(entry - written));
  bytes_.size += entry;
  ++entries_;
}

Header PackWriter::header(int64_t id) const {
  Header h;
  h.type = MsgType::kPacked;
  h.id = id;
  h.count = entries_;
  h.bytes = bytes_.size;
  return h;
}

PackBytes PackWriter::take() {
  PackBytes out = std::move(bytes_);
  bytes_ = PackBytes{};
  entries_ = 0;
  capacity_ = 0;
  return out;
}

namespace {

void check_packed_header(const Header& h) {
  if (h.type != MsgType::kPacked || h.count < 1 || h.bytes < 0)
    throw Error(
        str("kvstore: malformed packed message (", h.count, " entries, ", h.bytes, " bytes)"));
  if (h.bytes > max_packed_message_bytes())
    throw Error(str("kvstore: packed message ", h.id, " of ", h.bytes,
                    " bytes is over the limit of ", max_packed_message_bytes()));
}

}  // namespace

PackBytes receive_buffer(const Header& h) {
  check_packed_header(h);
  return PackBytes::make(h.bytes);
}

std::vector<PackedEntry> unpack(const Header& h, const std::byte* data) {
  check_packed_header(h);
  std::vector<PackedEntry> entries;
  int64_t at = 0;
  for (int64_t i = 0; i < h.count; ++i) {
    if (h.bytes - at < static_cast<int64_t>(sizeof(Header)))
      throw Error(str("kvstore: packed message ", h.id, " ends inside the header of entry ", i,
                      " of ", h.count, " (", h.bytes, " bytes)"));
    PackedEntry e;
    std::memcpy(&e.header, data + at, sizeof(Header));
    at += static_cast<int64_t>(sizeof(Header));
    if (e.header.bytes < 0 || padded(e.header.bytes) > h.bytes - at ||
        e.header.type == MsgType::kPacked)
      throw Error(str("kvstore: packed message ", h.id, ": entry ", i, " (",
                      msg_type_name(e.header.type), ", ", e.header.bytes,
                      " bytes) does not fit the message's ", h.bytes, " bytes"));
    e.data = data + at;
    at += padded(e.header.bytes);
    entries.push_back(e);
  }
  if (at != h.bytes)
    throw Error(str("kvstore: packed message ", h.id, " has ", h.bytes - at, " bytes after its ",
                    h.count, " entries"));
  return entries;
}

}  // namespace mx::kvstore
