// Data iterators (MXNet paper, section 3.3): each next() gives one batch of
// examples as NDArrays, prepared ahead of the consumer where the iterator
// has worker threads.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "base/shape.h"
#include "ndarray/ndarray.h"

namespace mx {

struct DataBatch {
  NDArray data;   // float32, (batch, ...) — NCHW for images
  NDArray label;  // float32, (batch,) or (batch, label_width)
  // The last `pad` examples only fill the batch up (wrapped around from the
  // start of the epoch, or zeros); metrics and predictions skip them.
  int pad = 0;
  // Per example: the record id (image records), or the example's position
  // in its file.
  std::vector<uint64_t> index;
};

class DataIter {
 public:
  virtual ~DataIter() = default;
  // The next batch of the epoch, or nullopt when the epoch is over.
  virtual std::optional<DataBatch> next() = 0;
  // Starts the next epoch (with a new order when shuffling).
  virtual void reset() = 0;
  // Shapes of DataBatch::data and DataBatch::label, batch axis included.
  virtual Shape data_shape() const = 0;
  virtual Shape label_shape() const = 0;
  // Batches the current epoch gives, where the iterator knows it up front
  // (distributed workers agree on a common count before each epoch).
  virtual std::optional<int64_t> batches_per_epoch() const { return std::nullopt; }
};

}  // namespace mx
