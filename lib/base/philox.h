// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
// 3", SC 2011): a counter-based generator. Each (key, counter) pair gives
// four independent 32-bit words with no state, so every GPU thread draws its
// own numbers from (seed, element index) in any order, and the CPU can run
// the same function to test what the GPU draws.
#pragma once

#include <cstdint>

#include "base/host_device.h"

namespace mx::philox {

struct Words {
  uint32_t v[4];
};

namespace detail {

inline constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
inline constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;

MX_HOST_DEVICE inline void mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t p = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
}

}  // namespace detail

// The ten rounds of Philox4x32 on `counter` with `key` (Random123's
// philox4x32_R(10, ...)); the key is bumped between rounds.
MX_HOST_DEVICE inline Words philox4x32_10(Words counter, uint32_t key0, uint32_t key1) {
  uint32_t* c = counter.v;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key0 += detail::kWeyl0;
      key1 += detail::kWeyl1;
    }
    uint32_t hi0, lo0, hi1, lo1;
    detail::mulhilo(detail::kMul0, c[0], hi0, lo0);
    detail::mulhilo(detail::kMul1, c[2], hi1, lo1);
    const uint32_t next[4] = {hi1 ^ c[1] ^ key0, lo1, hi0 ^ c[3] ^ key1, lo0};
    for (int k = 0; k < 4; ++k) c[k] = next[k];
  }
  return counter;
}

// A uniform double in [0, 1) with 53 random bits, the `index`-th draw of the
// stream `seed` (the first two words of one Philox block).
MX_HOST_DEVICE inline double uniform01(uint64_t seed, uint64_t index) {
  const Words w =
      philox4x32_10({{static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), 0u, 0u}},
                    static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  const uint64_t bits = (static_cast<uint64_t>(w.v[0]) << 32 | w.v[1]) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);  // 2^-53
}

}  // namespace mx::philox
