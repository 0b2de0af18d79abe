#include "io/epoch_order.h"

#include <numeric>

#include "base/error.h"
#include "io/random.h"

namespace mx {

std::vector<uint64_t> epoch_order(uint64_t count, int part_index, int num_parts, bool shuffle,
                                  uint64_t seed, uint64_t epoch) {
  MX_CHECK(num_parts >= 1 && part_index >= 0 && part_index < num_parts);
  std::vector<uint64_t> all(count);
  std::iota(all.begin(), all.end(), uint64_t{0});
  if (shuffle) Rng::derive({seed, epoch}).shuffle(all);
  const uint64_t begin = count * static_cast<uint64_t>(part_index) / num_parts;
  const uint64_t end = count * static_cast<uint64_t>(part_index + 1) / num_parts;
  return std::vector<uint64_t>(all.begin() + static_cast<std::ptrdiff_t>(begin),
                               all.begin() + static_cast<std::ptrdiff_t>(end));
}

BatchSlots batch_slots(uint64_t examples, uint64_t batch, uint64_t batch_size, bool round_batch) {
  BatchSlots slots;
  const uint64_t first = batch * batch_size;
  for (uint64_t i = 0; i < batch_size; ++i) {
    const uint64_t position = first + i;
    if (position < examples) {
      slots.items.push_back(position);
    } else {
      ++slots.pad;
      if (round_batch) slots.items.push_back(position % examples);
    }
  }
  return slots;
}

}  // namespace mx
