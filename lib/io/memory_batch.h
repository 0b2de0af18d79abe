// The batches of an iterator whose examples are all in memory (CSVIter,
// MNISTIter): the examples of one batch of the epoch's order, each written
// into its rows by the iterator, with the unused rows of a short last batch
// left zero.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "io/data_iter.h"
#include "io/epoch_order.h"

namespace mx {

struct MemoryBatchLayout {
  uint64_t batch_size = 1;
  bool round_batch = true;
  size_t data_width = 1, label_width = 1;  // floats per example
  Shape data_shape, label_shape;           // of the batch
};

// Batch `batch` of the epoch (then counts it), or nullopt when the epoch is
// over. `fill(example, data, label)` writes one example's data_width and
// label_width floats.
template <typename Fill>
std::optional<DataBatch> next_memory_batch(const std::vector<uint64_t>& order, uint64_t& batch,
                                           const MemoryBatchLayout& layout, Fill fill) {
  if (batch >= batch_count(order.size(), layout.batch_size)) return std::nullopt;
  const BatchSlots slots =
      batch_slots(order.size(), batch++, layout.batch_size, layout.round_batch);
  const size_t dw = layout.data_width, lw = layout.label_width;
  std::vector<float> data(layout.batch_size * dw, 0.0f), label(layout.batch_size * lw, 0.0f);
  DataBatch out;
  out.pad = slots.pad;
  out.index.assign(layout.batch_size, 0);
  for (size_t i = 0; i < slots.items.size(); ++i) {
    const uint64_t example = order[slots.items[i]];
    fill(example, &data[i * dw], &label[i * lw]);
    out.index[i] = example;
  }
  out.data = NDArray::from_vector(layout.data_shape, std::move(data));
  out.label = NDArray::from_vector(layout.label_shape, std::move(label));
  return out;
}

}  // namespace mx
