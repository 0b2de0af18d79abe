#include "op/workspace_slots.h"

#include <algorithm>

namespace mx::op {
namespace {
size_t round_up(size_t bytes, size_t align) { return (bytes + align - 1) / align * align; }
}  // namespace

int WorkspaceSlots::take(size_t bytes) {
  int best = -1;  // index into free_
  for (size_t i = 0; i < free_.size(); ++i) {
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const size_t have = bytes_[static_cast<size_t>(free_[i])];
    const size_t best_have = bytes_[static_cast<size_t>(free_[static_cast<size_t>(best)])];
    const bool fits = have >= bytes, best_fits = best_have >= bytes;
    if ((fits && (!best_fits || have < best_have)) || (!fits && !best_fits && have > best_have))
      best = static_cast<int>(i);
  }
  if (best < 0) {
    bytes_.push_back(bytes);
    return static_cast<int>(bytes_.size()) - 1;
  }
  const int slot = free_[static_cast<size_t>(best)];
  free_.erase(free_.begin() + best);
  bytes_[static_cast<size_t>(slot)] = std::max(bytes_[static_cast<size_t>(slot)], bytes);
  return slot;
}

void WorkspaceSlots::give_back(int slot) { free_.push_back(slot); }

std::vector<size_t> WorkspaceSlots::offsets(size_t align) const {
  std::vector<size_t> out;
  size_t offset = 0;
  for (size_t b : bytes_) {
    out.push_back(offset);
    offset += round_up(b, align);
  }
  return out;
}

size_t WorkspaceSlots::total(size_t align) const {
  size_t sum = 0;
  for (size_t b : bytes_) sum += round_up(b, align);
  return sum;
}

}  // namespace mx::op
