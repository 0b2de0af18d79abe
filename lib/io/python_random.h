// Python's random module, as far as im2rec uses it: random.seed(int) and
// random.shuffle on a list. Same Mersenne Twister, same seeding
// (init_by_array of the seed's 32-bit words), same rejection sampling, so a
// list shuffled here with seed 100 is in im2rec's order.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace mx {

class PythonRandom {
 public:
  explicit PythonRandom(uint64_t seed);

  uint32_t next_u32();
  // random.getrandbits(k) for 1 <= k <= 32.
  uint32_t getrandbits(int k) { return next_u32() >> (32 - k); }
  // random._randbelow(n) for 0 < n < 2^32.
  uint32_t randbelow(uint32_t n);

  template <typename T>
  void shuffle(std::vector<T>& x) {
    for (size_t i = x.size(); i-- > 1;) std::swap(x[i], x[randbelow(static_cast<uint32_t>(i + 1))]);
  }

 private:
  std::array<uint32_t, 624> state_{};
  size_t index_ = 624;
};

}  // namespace mx
