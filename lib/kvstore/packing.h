// Small keys travel together (as Horovod's tensor fusion): the init, push
// and pull requests of several small keys a worker sends one server in one
// call go as one message, and the server answers the requests of one such
// message that it can answer at once (for dist_sync, once a round is
// complete) with one message per worker. Per message that saves MPI's
// per-message cost, a handful of thread hand-overs on both sides and the
// server's loop, which is what small keys cost today.
//
// A packed message is a header {type kPacked, id: the sender's id of the
// message, count: entries, bytes: payload bytes} and a payload of entries,
// each a Header (its `bytes`: the entry's own payload) followed by that
// payload, padded with zeros to a multiple of 8 bytes. Entries are requests
// or replies exactly as they would travel alone (kInit, kPush, kPull from
// workers; kReply, kError from servers), each with its own request id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kvstore/message.h"

namespace mx::kvstore {

// Keys whose values have at most this many bytes are packed (0: never).
// Measured (docs/benchmarks.md, rounds of 16 keys): packed keys of 4 KiB
// moved 2.2-3.4 times what one message per key did, of 16 KiB 1.0-2.2
// times, of 64 KiB at most as much (the copies into and out of the packs
// cost what the saved messages did).
inline constexpr int64_t kDefaultPackThreshold = 16 * 1024;
// A packed message holds at most this many payload bytes; more entries go
// in further messages.
inline constexpr int64_t kMaxPackBytes = 16 << 20;

// Bytes an entry with `payload` bytes takes in a packed message.
int64_t packed_entry_bytes(int64_t payload);

// The payload of a packed message. Not zero-filled: every byte is written
// (or received) over at once, and for large packs clearing them cost as
// much as the copies themselves.
struct PackBytes {
  std::unique_ptr<std::byte[]> data;
  int64_t size = 0;
  static PackBytes make(int64_t size);
};

// The most payload bytes a packed message holds: kMaxPackBytes, or more when
// one entry alone (a key of up to kMaxPackBytes) is over it.
int64_t max_packed_message_bytes();

// The buffer an arriving packed message announced by `h` is received into.
// Throws Error naming the message when `h` is not a packed message's header
// or announces more than max_packed_message_bytes(): a sender's bug or a
// damaged header, refused before anything is allocated.
PackBytes receive_buffer(const Header& h);

// Builds the payload of one packed message.
class PackWriter {
 public:
  // Room for `bytes` more without reallocating (packed_entry_bytes of each entry).
  void reserve(int64_t bytes);
  // Appends an entry: `h` (h.bytes from `data`, or 0) and a copy of its payload.
  void add(const Header& h, const void* data);
  int64_t entries() const { return entries_; }
  int64_t size() const { return bytes_.size; }
  bool empty() const { return entries_ == 0; }
  // The header that announces the payload, with the sender's message id.
  Header header(int64_t id) const;
  // Moves the payload out (size() bytes of it); the writer is empty again.
  PackBytes take();

 private:
  PackBytes bytes_;  // bytes_.size: used
  int64_t capacity_ = 0;
  int64_t entries_ = 0;
};

struct PackedEntry {
  Header header;
  const std::byte* data = nullptr;  // header.bytes of them, inside the payload
};

// The entries of a packed message announced by `h` whose payload is `data`.
// Throws Error naming what is wrong when the payload does not hold
// h.count well-formed entries exactly.
std::vector<PackedEntry> unpack(const Header& h, const std::byte* data);

}  // namespace mx::kvstore
