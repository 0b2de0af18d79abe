// The random bits of Dropout's mask on the CPU. Element i of the stream
// `seed` draws 32 bits that depend on (seed, i) alone, so threads draw their
// parts in parallel and every instruction set draws the same mask: a Weyl
// sequence over the index (golden-ratio increments, both halves of the
// 64-bit seed and index mixed in) through Wellons' lowbias32 mixer
// (https://nullprogram.com/blog/2018/07/31/), one 32-bit multiply-xorshift
// chain a lane. Generic over uint32_t and a vector of them.
#pragma once

#include <cstdint>

namespace mx::op::vmath {
// Internal linkage: each instruction set's translation unit keeps its own
// copy (vmath_kernels.h says why none may be shared).
namespace {

template <typename U>
U dropout_bits(U index_low, uint32_t index_high, uint64_t seed) {
  U x = index_low * 0x9E3779B9u + static_cast<uint32_t>(seed);
  x ^= static_cast<uint32_t>(seed >> 32) ^ (index_high * 0x85EBCA6Bu);
  x ^= x >> 16;
  x *= 0x7FEB352Du;
  x ^= x >> 15;
  x *= 0x846CA68Bu;
  x ^= x >> 16;
  return x;
}

// Whether element `index` of the stream `seed` is kept: its bits are below
// `threshold` (the keep probability times 2^32).
inline bool dropout_keeps(uint64_t index, uint64_t seed, uint32_t threshold) {
  return dropout_bits<uint32_t>(static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
                                seed) < threshold;
}

}  // namespace
}  // namespace mx::op::vmath
