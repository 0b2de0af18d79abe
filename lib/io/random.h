// A small, fast, seedable generator with results that are the same on every
// platform (std:: distributions are not), for shuffles and augmentation.
// Each image gets its own generator seeded from (seed, epoch, position), so
// augmentation does not depend on which thread decodes what.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

namespace mx {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  // A generator for one combination of values (seed, epoch, index, ...).
  static Rng derive(std::initializer_list<uint64_t> values) {
    uint64_t h = 0x6a09e667f3bcc909ull;
    for (uint64_t v : values) h = mix(h ^ mix(v + 0x9e3779b97f4a7c15ull));
    return Rng(h);
  }

  // SplitMix64.
  uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ull;
    return mix(state_);
  }
  // Uniform in [0, n), unbiased; n > 0.
  uint64_t uniform(uint64_t n) {
    const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do r = next();
    while (r >= limit);
    return r % n;
  }
  // Uniform in [0, 1).
  double uniform01() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool coin() { return (next() >> 63) != 0; }

  template <typename T>
  void shuffle(std::vector<T>& values) {
    for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[uniform(i)]);
  }

 private:
  static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  uint64_t state_;
};

}  // namespace mx
