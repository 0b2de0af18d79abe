// The dmlc RecordIO framing (what MXNet's .rec files are made of):
//   uint32 kMagic, uint32 lrec = cflag << 29 | length, payload, zero padding
//   to a multiple of 4 bytes.
// A payload that contains kMagic at a 4-byte-aligned offset is written as
// parts split at each such magic (which is dropped): cflag 1 for the first
// part, 2 for middle parts, 3 for the last; a reader re-joins the parts with
// the magic. So an aligned magic in a file always starts a header, which is
// what lets a reader resynchronise after damage and split a file into shards.
// All words are little-endian.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace recordio {

static_assert(std::endian::native == std::endian::little,
              "RecordIO files are little-endian; this code reads words natively");

inline constexpr uint32_t kMagic = 0xced7230a;
inline constexpr uint32_t kHeaderSize = 8;
// Lengths must be below 2^29 (the top three bits of lrec hold the flag).
inline constexpr uint32_t kMaxLength = (1u << 29) - 1;

enum PartFlag : uint32_t { kWhole = 0, kFirst = 1, kMiddle = 2, kLast = 3 };

constexpr uint32_t encode_lrec(uint32_t cflag, uint32_t length) { return cflag << 29 | length; }
constexpr uint32_t lrec_flag(uint32_t lrec) { return lrec >> 29; }
constexpr uint32_t lrec_length(uint32_t lrec) { return lrec & kMaxLength; }
// Bytes a part of `length` takes after its header, padding included.
constexpr uint64_t padded_length(uint64_t length) { return (length + 3) & ~uint64_t{3}; }

inline uint32_t load_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace recordio
