// Which examples a worker reads in an epoch, in which order, and how they
// fall into batches. Shared by every iterator whose examples can be counted
// up front (an .idx, an IDX file, a CSV table).
//
// Sharding: with shuffling, all workers permute the whole data set with the
// same (seed, epoch) and each takes its contiguous slice of the permutation,
// so the shards are disjoint in every epoch and mix across epochs. Without
// shuffling, worker k of n takes examples [count*k/n, count*(k+1)/n).
#pragma once

#include <cstdint>
#include <vector>

#include "base/param.h"

namespace mx {

std::vector<uint64_t> epoch_order(uint64_t count, int part_index, int num_parts, bool shuffle,
                                  uint64_t seed, uint64_t epoch);

// Batch b of an epoch whose examples are `order` (positions into it).
struct BatchSlots {
  std::vector<uint64_t> items;  // positions into `order`; batch_size of them with round_batch
  int pad = 0;                  // filler examples at the end
};

inline uint64_t batch_count(uint64_t examples, uint64_t batch_size) {
  return (examples + batch_size - 1) / batch_size;
}

// The last batch is completed by wrapping around to the start of the epoch
// when round_batch is set; otherwise it holds fewer items and `pad` says how
// many slots the iterator fills with zeros.
BatchSlots batch_slots(uint64_t examples, uint64_t batch, uint64_t batch_size, bool round_batch);

// The sharding parameters of an iterator (MXNet's num_parts, part_index).
template <typename P>
void declare_shard_fields(ParamDecl<P>& d) {
  d.field("num_parts", &P::num_parts)
      .set_default(1)
      .set_lower_bound(1)
      .describe("number of disjoint shards (distributed workers)");
  d.field("part_index", &P::part_index)
      .set_default(0)
      .set_lower_bound(0)
      .describe("this worker's shard, in [0, num_parts)");
}

}  // namespace mx
